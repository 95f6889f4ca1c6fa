import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, min } from '../expressions.js';
import type { GemvBuilder } from './gemv-interface.js';

/** Where a step's weights come from and go to; see stageWords. */
export interface StagedSpan {
  /** The first word to stage: the first of a sector, so that each 32-lane load is whole sectors. */
  readonly sectorWord: Expr<'u32'>;
  /** The last word the step needs: later slots get copies of it (defined, and no extra sectors). */
  readonly lastWord: Expr<'u32'>;
  readonly stagingBase: Var<'u32'>;
  readonly lane: Var<'u32'>;
  /** 32-word loads the warp makes. */
  readonly loads: number;
}

/**
 * Copies W words sectorWord.. into the warp's staging slice, lane l taking words l, l + 32, …
 * (each load 128 contiguous bytes), then a barrier so the warp's lanes see each other's words.
 */
export function stageWords(b: GemvBuilder, span: StagedSpan): void {
  const { sectorWord, lastWord, stagingBase, lane, loads } = span;
  for (let k = 0; k < loads; k++) {
    const slot = add(lane, k * WARP_SIZE);
    const word = b.load('w', min(add(sectorWord, slot), lastWord));
    b.store('staging', add(stagingBase, slot), word);
  }
  b.barrier();
}
