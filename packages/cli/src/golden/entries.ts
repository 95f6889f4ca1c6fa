import { formatSchedule, type PtxArch, type Schedule } from '@forge/ir';

/** One pinned output: a catalog kernel on a target at a schedule (overrides of the defaults). */
export interface GoldenEntrySpec {
  readonly kernelId: string;
  readonly target: { readonly kind: 'ptx'; readonly arch: PtxArch };
  readonly schedule: Schedule;
}

const PINNED_ARCHS: readonly PtxArch[] = ['sm_75', 'sm_80', 'sm_90'];

/** Everything `golden/` pins: every catalog kernel per pinned arch, plus non-default schedules. */
export const GOLDEN_ENTRIES: readonly GoldenEntrySpec[] = [
  ...['affine-f32', 'rmsnorm'].flatMap((kernelId) =>
    PINNED_ARCHS.map((arch): GoldenEntrySpec => ({ kernelId, target: { kind: 'ptx', arch }, schedule: {} })),
  ),
  { kernelId: 'rmsnorm', target: { kind: 'ptx', arch: 'sm_80' }, schedule: { workgroupSize: 128 } },
];

/** The entry's file under golden/: `ptx/rmsnorm.sm_80.ptx`, `ptx/rmsnorm.sm_80.workgroupSize-128.ptx`. */
export function goldenFileName(entry: GoldenEntrySpec): string {
  const schedule = Object.keys(entry.schedule).length === 0 ? '' : `.${formatSchedule(entry.schedule).replace(/=/g, '-').replace(/,/g, '.')}`;
  return `${entry.target.kind}/${entry.kernelId}.${entry.target.arch}${schedule}.${entry.target.kind}`;
}
