import {
  ValidationError,
  describeJson,
  checkTargetRecord,
  takeSnapshot,
  type TargetLimits,
} from '@forge/ir';

/** The NVIDIA architectures this backend targets (Turing sm_75 to Hopper sm_90). */
export const PTX_ARCHS = ['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90'] as const;
/** A supported NVIDIA architecture; see PTX_ARCHS. */
export type PtxArch = (typeof PTX_ARCHS)[number];

/**
 * A PTX target; `ptxTarget(arch)` builds it with the lowest ISA version the arch needs. Part of
 * every cache key.
 */
export interface PtxTarget {
  readonly kind: 'ptx';
  readonly arch: PtxArch;
  /** PTX ISA version, `"7.0"`. */
  readonly ptxVersion: string;
}

/**
 * What every PTX schedule must respect beyond a knob's `ptx` bounds: CUDA's 1024 threads per block
 * and the 48 KiB of static shared memory a kernel may declare.
 */
export const PTX_LIMITS: TargetLimits = {
  kind: 'ptx',
  maxWorkgroupSize: 1024,
  maxSharedBytes: 48 * 1024,
};

/** The PTX ISA version that introduced each architecture: the lowest `.version` that can target it. */
export const PTX_MIN_VERSIONS: Readonly<Record<PtxArch, string>> = {
  sm_75: '6.3',
  sm_80: '7.0',
  sm_86: '7.1',
  sm_89: '7.8',
  sm_90: '7.8',
};

/**
 * The `.version` each arch's default target prints: its PTX_MIN_VERSIONS entry, except sm_75 at 6.5
 * (CUDA 10.2's ISA, read by every driver since 2019), the first with `mma.sync` m16n8k8.
 */
export const PTX_VERSIONS: Readonly<Record<PtxArch, string>> = {
  sm_75: '6.5',
  sm_80: '7.0',
  sm_86: '7.1',
  sm_89: '7.8',
  sm_90: '7.8',
};

/**
 * Every PTX ISA version from the oldest an arch needs (6.3) to the newest CUDA 13.0's ptxas reads
 * (9.0); ptxas rejects any other `.version` ("Unsupported .version 7.9").
 */
export const PTX_ISA_VERSIONS: readonly string[] = [
  '6.3', '6.4', '6.5',
  '7.0', '7.1', '7.2', '7.3', '7.4', '7.5', '7.6', '7.7', '7.8',
  '8.0', '8.1', '8.2', '8.3', '8.4', '8.5', '8.6', '8.7', '8.8',
  '9.0',
]; // prettier-ignore

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

/**
 * `value` checked as a PtxTarget and read once (emission prints its fields into the module): kind
 * `ptx`, a known arch, and an ISA version ptxas reads (PTX_ISA_VERSIONS) no older than the arch needs.
 */
export function checkPtxTarget(value: unknown): PtxTarget {
  const copy = checkTargetRecord(value, 'ptx', ['arch', 'ptxVersion']);
  const fail = (path: string, message: string): never => {
    throw new ValidationError([{ path, message }]);
  };
  const arch = PTX_ARCHS.find((candidate) => candidate === copy['arch']);
  if (arch === undefined)
    return fail(
      'target.arch',
      `must be one of ${PTX_ARCHS.join(', ')}, got ${describeJson(copy['arch'])}`,
    );
  const version = copy['ptxVersion'];
  if (typeof version !== 'string' || !/^[1-9][0-9]?\.[0-9]$/.test(version))
    return fail(
      'target.ptxVersion',
      `must be a PTX ISA version like "7.0", got ${describeJson(version)}`,
    );
  if (!PTX_ISA_VERSIONS.includes(version))
    fail(
      'target.ptxVersion',
      `${version} is not a PTX ISA version ptxas reads (${PTX_ISA_VERSIONS[0]} to ${PTX_ISA_VERSIONS.at(-1)}, no 6.6-6.9 or 7.9)`,
    );
  const target: PtxTarget = { kind: 'ptx', arch, ptxVersion: version };
  if (isaVersion(target) < isaVersion({ ...target, ptxVersion: PTX_MIN_VERSIONS[arch] }))
    fail(
      'target.ptxVersion',
      `${version} cannot target ${arch} (needs ${PTX_MIN_VERSIONS[arch]} or later)`,
    );
  return takeSnapshot(target) as PtxTarget;
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
