import {
  ValidationError,
  emit,
  evaluateSizeExpression,
  formatSchedule,
  kernelDispatches,
  sequenceLaunch,
  walkBody,
  type Backend,
  type GeneratedShader,
  type KernelSpec,
  type LaunchInfo,
  type LoweredModule,
  type Stmt,
  InternalError,
} from '@forge/ir';
import { wgslLaunchInfo } from './launch.js';
import { WGSL_PASSES, requireF16Feature, requireUniformWarpOps } from './legalize/index.js';
import { vectorBufferWidths } from './legalize/vector-buffers.js';
import { saturatingConversionFunction } from './ops/conversion.js';
import { wgslType } from './ops/types.js';
import { mmaScratchBytes, mmaScratchDeclarations } from './ops/mma.js';
import { WARP_SCRATCH } from './ops/warp.js';
import {
  PARAMS_STRUCT,
  PARAMS_VARIABLE,
  WgslBodyWriter,
  bufferName,
  sharedName,
} from './render-body.js';
import { WGSL_LIMITS, checkWgslTarget, hasFeature, type WgslTarget } from './targets.js';
import { BUILD_INFO } from './build-info.js';

/** Name and version of this backend; part of every cache key. */
export const WGSL_BACKEND = `${BUILD_INFO.name}@${BUILD_INFO.version}`;

// `wg<k>_` prefixes name the shared arrays of stage k, which has its own workgroup memory.
const GENERATED_NAME = /^(buf_|wg_|wg\d+_|v_|forge_|ForgeParams$)/;

/** The WGSL name of a shared array of dispatch `index`: the first keeps `wg_`, stage k `wg<k>_`. */
const stageSharedName =
  (index: number) =>
  (name: string): string =>
    index === 0 ? sharedName(name) : `wg${index}_${name}`;

/** Which warp operations a legalized body uses: shuffles or reductions, and mmas. */
function warpOpKinds(body: readonly Stmt[]): { exchanges: boolean; mma: boolean } {
  const uses = { exchanges: false, mma: false };
  walkBody(body, {
    statement: (statement) => {
      if (statement.op === 'shuffle' || statement.op === 'reduce') uses.exchanges = true;
      if (statement.op === 'mma') uses.mma = true;
    },
  });
  return uses;
}

/** The WGSL backend: WGSL_LIMITS, the feature check, WGSL_PASSES, and one module of every entry. */
export const wgslBackend: Backend<WgslTarget> = {
  name: WGSL_BACKEND,
  limits: WGSL_LIMITS,
  checkTarget: checkWgslTarget,
  checkSpec: checkEntryPoints,
  passes: WGSL_PASSES,
  render: renderModule,
};

/**
 * Renders a KernelSpec to a WGSL compute shader. The spec and schedule are validated against the
 * kernel's `wgsl` bounds and WGSL_LIMITS first (ValidationError); f16 without the `f16` feature, or warp operations in
 * non-uniform control flow, are an UnsupportedError. Same input, same bytes, in any process. A
 * multi-dispatch spec renders one module with a `@compute` function per dispatch over the same
 * bindings (scratch buffers as `read_write` storage after the buffers), each with its own
 * workgroup arrays.
 */
export function emitWgsl(
  specInput: unknown,
  scheduleOverrides: Readonly<Record<string, number>>,
  targetInput: WgslTarget,
): GeneratedShader<WgslTarget> {
  return emit(wgslBackend, specInput, scheduleOverrides, targetInput);
}

/** Entry points may not take a name the backend generates. */
function checkEntryPoints(spec: KernelSpec): void {
  kernelDispatches(spec).forEach((view, index) => {
    if (GENERATED_NAME.test(view.entryPoint)) {
      throw new ValidationError([
        {
          path: index === 0 ? 'entryPoint' : `stages[${index - 1}].entryPoint`,
          message: `'${view.entryPoint}' collides with names the WGSL backend generates (buf_, wg_, wg<k>_, v_, forge_ prefixes)`,
        },
      ]);
    }
  });
}

/** The module: enables, params, bindings, workgroup arrays, helpers, then a `@compute` a dispatch. */
function renderModule(module: LoweredModule<WgslTarget>): { source: string; launch: LaunchInfo } {
  const { spec, schedule, target } = module;
  const dispatches = module.dispatches.map((dispatch) => ({
    ...dispatch,
    ...warpOpKinds(dispatch.body),
  }));
  const views = dispatches.map((dispatch) => dispatch.view);
  // Every dispatch is checked, so the first that needs f16 is the one named.
  const usesF16 = dispatches
    .map(({ view, body }) => requireF16Feature(view, body, target))
    .some((uses) => uses);
  if (dispatches.some(({ exchanges, mma }) => exchanges || mma))
    requireUniformWarpOps(spec, target);
  const warpOps = dispatches.some((dispatch) => dispatch.exchanges);
  const subgroups = warpOps && hasFeature(target, 'subgroups');
  // One warp exchange array (and one pair of mma arrays) serves every entry that needs it, sized
  // for the largest workgroup.
  const largest = (uses: (dispatch: (typeof dispatches)[number]) => boolean): number =>
    Math.max(0, ...dispatches.filter(uses).map((dispatch) => dispatch.workgroupSize));
  const warpLength = largest((dispatch) => dispatch.exchanges);
  const mmaLength = largest((dispatch) => dispatch.mma);
  const requiredFeatures = [
    ...(usesF16 ? ['shader-f16'] : []),
    ...(subgroups ? ['subgroups'] : []),
  ];
  const launches = dispatches.map(({ view, exchanges, mma }, index) => {
    const scratchBytes = (exchanges ? 4 * warpLength : 0) + (mma ? mmaScratchBytes(mmaLength) : 0);
    const launch = wgslLaunchInfo(view, schedule, scratchBytes, requiredFeatures);
    if (launch.sharedBytes > WGSL_LIMITS.maxSharedBytes) {
      throw new ValidationError([
        {
          path: index === 0 ? 'shared' : `stages[${index - 1}].shared`,
          message: `${launch.sharedBytes} bytes of workgroup memory (incl. ${scratchBytes} for warp exchange) exceed ${WGSL_LIMITS.maxSharedBytes}`,
        },
      ]);
    }
    return launch;
  });
  const launch = sequenceLaunch(spec, schedule, launches);

  const [first] = views;
  if (first === undefined) throw new InternalError('wgsl', `${spec.id}: no dispatches`);
  const vectorBuffers = vectorBufferWidths(
    first,
    dispatches.flatMap((dispatch) => dispatch.body),
  );
  const writers = dispatches.map(({ view, body }, index) => {
    const writer = new WgslBodyWriter(view, subgroups, vectorBuffers, stageSharedName(index));
    writer.block(body);
    return writer;
  });
  const extensions = [...new Set(writers.flatMap((writer) => [...writer.extensions]))].sort();
  const conversions = [
    ...new Set(writers.flatMap((writer) => [...writer.saturatingConversions])),
  ].sort();
  const paramsBinding = launch.bindings?.find((binding) => binding.kind === 'params');
  const sections: string[][] = [
    [
      ...(usesF16 ? ['enable f16;'] : []),
      ...(subgroups ? ['enable subgroups;'] : []),
      // Optional in Dawn, but it makes an implementation without the builtin say so up front.
      ...extensions.map((extension) => `requires ${extension};`),
    ],
    spec.params.length === 0
      ? []
      : [
          `struct ${PARAMS_STRUCT} {`,
          ...spec.params.map((param) => `  ${param.name}: ${wgslType(param.type)},`),
          '}',
        ],
    [
      ...first.buffers.map((buffer) => {
        const width = vectorBuffers.get(buffer.name);
        const element = wgslType(buffer.element);
        const stored = width === undefined ? element : `vec${width}<${element}>`;
        return `@group(${buffer.group}) @binding(${buffer.binding}) var<storage, ${buffer.access === 'read_write' ? 'read_write' : 'read'}> ${bufferName(buffer.name)}: array<${stored}>;`;
      }),
      ...(paramsBinding === undefined
        ? []
        : [
            `@group(0) @binding(${paramsBinding.binding}) var<uniform> ${PARAMS_VARIABLE}: ${PARAMS_STRUCT};`,
          ]),
    ],
    [
      ...views.flatMap((view, index) =>
        view.shared.map(
          (array) =>
            `var<workgroup> ${stageSharedName(index)(array.name)}: array<${wgslType(array.element)}, ${evaluateSizeExpression(array.length, schedule)}>;`,
        ),
      ),
      ...(warpOps ? [`var<workgroup> ${WARP_SCRATCH}: array<u32, ${warpLength}>;`] : []),
      ...(mmaLength > 0 ? mmaScratchDeclarations(mmaLength) : []),
    ],
    conversions.flatMap((to, index) => [
      ...(index > 0 ? [''] : []),
      ...saturatingConversionFunction(to),
    ]),
  ];
  const declarations = sections
    .filter((section) => section.length > 0)
    .flatMap((section) => ['', ...section]);
  const builtins = [
    '@builtin(local_invocation_index) local_index: u32',
    '@builtin(workgroup_id) workgroup_id: vec3<u32>',
    '@builtin(num_workgroups) num_workgroups: vec3<u32>',
    ...(subgroups ? ['@builtin(subgroup_size) subgroup_size: u32'] : []),
  ];
  const source = [
    `// Generated by Forge from KernelSpec '${spec.id}' v${spec.semanticVersion}. Do not edit.`,
    `// ${spec.description}`,
    `// semantic hash ${module.semanticHash}`,
    `// schedule ${formatSchedule(schedule)}; features ${target.features.join(',') || 'none'}`,
    ...declarations,
    ...dispatches.flatMap(({ view, workgroupSize }, index) => [
      '',
      `@compute @workgroup_size(${workgroupSize})`,
      `fn ${view.entryPoint}(`,
      ...builtins.map((builtin) => `  ${builtin},`),
      ') {',
      ...(writers[index]?.lines ?? []),
      '}',
    ]),
    '',
  ].join('\n');

  return { source, launch };
}
