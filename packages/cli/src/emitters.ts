import type { GeneratedShader, Schedule } from '@forge/ir';
import { emitPtx, ptxTarget, type PtxTarget } from '@forge/ptx';
import { emitWgsl, wgslTarget, type WgslTarget } from '@forge/wgsl';
import type { GoldenTarget } from './golden/entries.js';

/** A target of one of the backends the CLI drives. */
export type BackendTarget = PtxTarget | WgslTarget;

/** One emitter per target kind: the table the CLI and the golden machinery dispatch on. */
export const EMITTERS: {
  readonly [Kind in GoldenTarget['kind']]: (
    spec: unknown,
    schedule: Schedule,
    target: Extract<GoldenTarget, { kind: Kind }>,
  ) => GeneratedShader<BackendTarget>;
} = {
  ptx: (spec, schedule, target) => emitPtx(spec, schedule, ptxTarget(target.arch)),
  wgsl: (spec, schedule, target) => emitWgsl(spec, schedule, wgslTarget(target.features)),
};

export function emitFor(
  spec: unknown,
  schedule: Schedule,
  target: GoldenTarget,
): GeneratedShader<BackendTarget> {
  return target.kind === 'ptx'
    ? EMITTERS.ptx(spec, schedule, target)
    : EMITTERS.wgsl(spec, schedule, target);
}
