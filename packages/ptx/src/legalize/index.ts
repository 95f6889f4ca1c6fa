import { BIND_SCHEDULE, type BackendPass, type Stmt } from '@forge/ir';
import { lowerBoolOps } from './lower-bool-ops.js';
import { lowerMma } from './lower-mma.js';
import { lowerReductions } from './lower-reductions.js';
import { widenF16 } from './widen-f16.js';
import type { PtxTarget } from '../targets.js';

/**
 * One IR-to-IR rewrite run before printing: returns a body equivalent to `body` that PTX on
 * `target` can express more directly.
 */
export type LegalizationPass = (body: readonly Stmt[], target: PtxTarget) => Stmt[];

/** Rewrites applied in order before printing; after them every op has a PTX mnemonic or is unsupported. */
export const PTX_LEGALIZATION: readonly LegalizationPass[] = [
  lowerMma,
  lowerReductions,
  lowerBoolOps,
  widenF16,
];

/**
 * Runs every PTX_LEGALIZATION pass over `body`, in order. emitPtx does this itself; call it to see
 * the body PTX is printed from.
 */
export function legalizeForPtx(body: readonly Stmt[], target: PtxTarget): Stmt[] {
  return PTX_LEGALIZATION.reduce<Stmt[]>((current, pass) => pass(current, target), [...body]);
}

/** PTX's passes in order: the schedule bound, then every PTX_LEGALIZATION pass. */
export const PTX_PASSES: readonly BackendPass<PtxTarget>[] = [
  BIND_SCHEDULE,
  ...PTX_LEGALIZATION.map(
    (pass): BackendPass<PtxTarget> =>
      (body, { target }) =>
        pass(body, target),
  ),
];
