import { PTX_ARCHS, ValidationError, type PtxArch, type PtxTarget } from '@forge/ir';

/** The PTX ISA version that introduced each architecture: the lowest `.version` that can target it. */
export const PTX_VERSIONS: Readonly<Record<PtxArch, string>> = {
  sm_75: '6.3',
  sm_80: '7.0',
  sm_86: '7.1',
  sm_89: '7.8',
  sm_90: '7.8',
};

/** The target for an arch name; an unknown arch is a ValidationError on `arch`. */
export function ptxTarget(arch: string): PtxTarget {
  const known = PTX_ARCHS.find((candidate) => candidate === arch);
  if (known === undefined) {
    throw new ValidationError([
      { path: 'arch', message: `unknown arch '${arch}' (known: ${PTX_ARCHS.join(', ')})` },
    ]);
  }
  return { kind: 'ptx', arch: known, ptxVersion: PTX_VERSIONS[known] };
}

/** Compute capability as a number (sm_86 -> 86), for feature checks. */
export function smVersion(target: PtxTarget): number {
  return Number(target.arch.slice(3));
}

/** PTX ISA version as a number scaled by ten (7.8 -> 78). */
export function isaVersion(target: PtxTarget): number {
  const [major, minor] = target.ptxVersion.split('.');
  return Number(major) * 10 + Number(minor);
}
