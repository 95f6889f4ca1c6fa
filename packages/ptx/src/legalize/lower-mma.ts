import { lowerMmaToShuffles, rewriteBody, type Stmt } from '@forge/ir';
import { mmaForm } from '../ops/mma.js';
import type { PtxTarget } from '../targets.js';

/**
 * An `mma` with no tensor-core form on the target (sm_75 below PTX ISA 6.5) becomes shuffles and
 * f32 arithmetic, as on WGSL; the others stay for the printer (MMA_FORMS).
 */
export function lowerMma(body: readonly Stmt[], target: PtxTarget): Stmt[] {
  return rewriteBody(body, {
    statement: (statement) =>
      statement.op === 'mma' && mmaForm(statement.shape, target) === undefined
        ? lowerMmaToShuffles([statement])
        : [statement],
  });
}
