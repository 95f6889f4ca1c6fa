import { formatSchedule, type Schedule } from '@forge/ir';
import type { PtxArch } from '@forge/ptx';
import type { WgslFeature } from '@forge/wgsl';

/** The target a golden entry is emitted for: a PTX arch, or a WGSL feature set. */
export type GoldenTarget =
  | { readonly kind: 'ptx'; readonly arch: PtxArch }
  | { readonly kind: 'wgsl'; readonly features: readonly WgslFeature[] };

/** One pinned output: a catalog kernel on a target at a schedule (overrides of the defaults). */
export interface GoldenEntrySpec {
  readonly kernelId: string;
  readonly target: GoldenTarget;
  readonly schedule: Schedule;
}

const KERNELS = ['affine-f32', 'rmsnorm', 'q8_0-gemv', 'q4k-gemv', 'q6k-gemv', 'q6k-soa-gemv'];
const PINNED_ARCHS: readonly PtxArch[] = ['sm_75', 'sm_80', 'sm_90'];
const PINNED_FEATURE_SETS: readonly (readonly WgslFeature[])[] = [[], ['f16', 'subgroups']];

/** Everything `golden/` pins: every catalog kernel per pinned arch and feature set, plus non-default schedules. */
export const GOLDEN_ENTRIES: readonly GoldenEntrySpec[] = [
  ...KERNELS.flatMap((kernelId) =>
    PINNED_ARCHS.map((arch): GoldenEntrySpec => ({
      kernelId,
      target: { kind: 'ptx', arch },
      schedule: {},
    })),
  ),
  { kernelId: 'rmsnorm', target: { kind: 'ptx', arch: 'sm_80' }, schedule: { workgroupSize: 128 } },
  ...KERNELS.flatMap((kernelId) =>
    PINNED_FEATURE_SETS.map((features): GoldenEntrySpec => ({
      kernelId,
      target: { kind: 'wgsl', features },
      schedule: {},
    })),
  ),
];

/** `ptx/rmsnorm.sm_80.ptx`, `ptx/rmsnorm.sm_80.workgroupSize-128.ptx`, `wgsl/rmsnorm.f16-subgroups.wgsl`. */
export function goldenFileName(entry: GoldenEntrySpec): string {
  const variant =
    entry.target.kind === 'ptx'
      ? [entry.target.arch]
      : entry.target.features.length > 0
        ? [entry.target.features.join('-')]
        : [];
  const schedule =
    Object.keys(entry.schedule).length === 0
      ? []
      : [formatSchedule(entry.schedule).replace(/=/g, '-').replace(/,/g, '.')];
  return `${entry.target.kind}/${[entry.kernelId, ...variant, ...schedule].join('.')}.${entry.target.kind}`;
}
