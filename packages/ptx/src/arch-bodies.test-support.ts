import type { GeneratedShader } from '@forge/ir';
import type { PtxArch } from './targets.js';

/** The archs the simulator suites cover: the golden ones. */
export const SIMULATED_ARCHS = ['sm_75', 'sm_80', 'sm_90'] as const satisfies readonly PtxArch[];

/** One distinct PTX body and the archs that emit it, so a suite simulates it once for all of them. */
export interface ArchBody {
  readonly archs: readonly PtxArch[];
  /** The first arch's shader; the others' differ only in their header lines. */
  readonly shader: GeneratedShader;
  /** Each arch's shader, in `archs` order, for the test to compare. */
  readonly shaders: readonly GeneratedShader[];
}

// The only lines that may differ between archs sharing a body; everything else is compared.
const HEADER_LINE = /^\.(?:version|target) .*$/gm;

/** `source` with its `.version` and `.target` lines blanked: what the simulator actually runs. */
export function ptxBody(source: string): string {
  return source.replace(HEADER_LINE, '');
}

/** The header lines `ptxBody` removes from `source`. */
export function ptxHeaderLines(source: string): string[] {
  return source.match(HEADER_LINE) ?? [];
}

/**
 * Groups `archs` by the shader `emit` gives each: same body apart from the header lines and the
 * same launch metadata. A backend that specializes an arch yields a group of its own.
 */
export function distinctBodies(
  emit: (arch: PtxArch) => GeneratedShader,
  archs: readonly PtxArch[] = SIMULATED_ARCHS,
): ArchBody[] {
  const groups = new Map<string, { archs: PtxArch[]; shaders: GeneratedShader[] }>();
  for (const arch of archs) {
    const shader = emit(arch);
    const key = `${JSON.stringify(shader.launch)}\n${ptxBody(shader.source)}`;
    const group = groups.get(key) ?? { archs: [], shaders: [] };
    group.archs.push(arch);
    group.shaders.push(shader);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ archs: members, shaders }) => ({
    archs: members,
    shader: shaders[0] as GeneratedShader,
    shaders,
  }));
}

/**
 * What a test asserts of a group before simulating it once: each arch's module names that arch in
 * one `.target` line and one `.version` line, and apart from those two lines is the first arch's.
 */
export function bodyMismatches(group: ArchBody): string[] {
  const problems: string[] = [];
  const body = ptxBody(group.shader.source);
  group.archs.forEach((arch, index) => {
    const source = group.shaders[index]?.source ?? '';
    const header = ptxHeaderLines(source);
    if (header.length !== 2 || !header.includes(`.target ${arch}`))
      problems.push(`${arch}: header lines ${JSON.stringify(header)}`);
    if (ptxBody(source) !== body) problems.push(`${arch}: body differs from ${group.archs[0]}'s`);
  });
  return problems;
}
