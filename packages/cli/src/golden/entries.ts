import { formatSchedule, type Schedule } from '@forge/ir';
import { CATALOG, catalogIdOf } from '@forge/ir/kernels';
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

/** The target kinds golden/ pins, in the order of its entries. */
const GOLDEN_KINDS = ['ptx', 'wgsl'] as const;
export type GoldenKind = (typeof GOLDEN_KINDS)[number];

/** Every catalog kernel's default schedule is pinned on each of these targets. */
const GOLDEN_TARGETS: Readonly<Record<GoldenKind, readonly GoldenTarget[]>> = {
  ptx: (['sm_75', 'sm_80', 'sm_90'] as const).map((arch) => ({ kind: 'ptx', arch })),
  wgsl: [[], ['f16', 'subgroups'] as const].map((features) => ({ kind: 'wgsl', features })),
};

/** GOLDEN_SCHEDULES are pinned on one target per kind: what they vary is the schedule. */
const SCHEDULE_TARGET: Readonly<Record<GoldenKind, GoldenTarget>> = {
  ptx: { kind: 'ptx', arch: 'sm_80' },
  wgsl: { kind: 'wgsl', features: [] },
};

/**
 * Schedules pinned besides each kernel's default, by kernel id and target kind, on that kind's
 * SCHEDULE_TARGET: schedules that make a schedule-dependent change show in a golden diff.
 */
export const GOLDEN_SCHEDULES: Readonly<
  Record<string, Partial<Record<GoldenKind, readonly Schedule[]>>>
> = {
  // A non-default workgroup size.
  rmsnorm: { ptx: [{ workgroupSize: 128 }] },
  // The edge schedules: the unrolled step and the group size at their ends.
  'f32-gemv': { ptx: [{ vectors: 1, workgroupSize: 32 }, { vectors: 4 }] },
  'f16-gemv': { ptx: [{ vectors: 1, workgroupSize: 32 }, { vectors: 4 }] },
};

let entries: readonly GoldenEntrySpec[] | undefined;

/**
 * Everything `golden/` pins, derived from the catalog: per target kind, every kernel's default
 * schedule on each golden target, then each kernel's GOLDEN_SCHEDULES for that kind. Computed on
 * the first call, not at import: it reads every kernel, and a command that emits one need not
 * build the others.
 */
export function goldenEntries(): readonly GoldenEntrySpec[] {
  entries ??= GOLDEN_KINDS.flatMap((kind) => {
    const kernels = [...CATALOG.values()];
    return [
      ...kernels.flatMap((kernel) =>
        GOLDEN_TARGETS[kind].map((target) => ({
          kernelId: catalogIdOf(kernel),
          target,
          schedule: {},
        })),
      ),
      ...kernels.flatMap((kernel) =>
        (GOLDEN_SCHEDULES[catalogIdOf(kernel)]?.[kind] ?? []).map((schedule) => ({
          kernelId: catalogIdOf(kernel),
          target: SCHEDULE_TARGET[kind],
          schedule,
        })),
      ),
    ];
  });
  return entries;
}

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
