import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, and, ge, le } from '../expressions.js';
import type { GemvBuilder } from './gemv-interface.js';

/** Where a step's weights come from and go to; see stageWords. */
export interface StagedSpan {
  /** The first word to stage: the first of a sector, so that each 32-lane load is whole sectors. */
  readonly sectorWord: Expr<'u32'>;
  /** The first word the step needs: earlier slots of its first sector are not loaded. */
  readonly firstWord: Expr<'u32'>;
  /** The last word the step needs: later slots are not loaded (they keep older words). */
  readonly lastWord: Expr<'u32'>;
  readonly stagingBase: Var<'u32'>;
  readonly lane: Var<'u32'>;
  /** Whether the warp's row exists: a warp past the last row loads nothing. */
  readonly live: Var<'bool'>;
  /** 32-word loads the warp makes. */
  readonly loads: number;
  /** When `full` holds, loads 1 to `unguarded` - 1 need no guard (load 0 checks firstWord only). */
  readonly full?: Expr<'bool'>;
  readonly unguarded?: number;
}

/**
 * Copies W words sectorWord..lastWord into the warp's staging slice, lane l taking words l, l + 32,
 * … (each load 128 contiguous bytes, each word loaded once), then a barrier so the warp's lanes see
 * each other's words. Only the warp's own lanes read its slice.
 */
export function stageWords(b: GemvBuilder, span: StagedSpan): void {
  const { sectorWord, firstWord, lastWord, stagingBase, lane, live, loads, full } = span;
  const unguarded = span.unguarded ?? 0;
  b.if(live, (copy) => {
    const {
      stageSource: source,
      stageSlot: slot,
      stageLast: last,
    } = copy.let({
      stageSource: add(sectorWord, lane),
      stageSlot: add(stagingBase, lane),
      stageLast: lastWord,
    });
    // Load 0 may start before the step (its sector's head), loads from guardFrom on past its end.
    const stage = (block: GemvBuilder, guardFrom: number) => {
      const copies = Array.from({ length: loads }, (_, k) => {
        const word = k === 0 ? source : add(source, k * WARP_SIZE);
        const copyWord = (to: GemvBuilder) =>
          to.store('staging', k === 0 ? slot : add(slot, k * WARP_SIZE), to.load('w', word));
        const head = k === 0 ? ge(word, firstWord) : undefined;
        const tail = k >= guardFrom ? le(word, last) : undefined;
        return { copyWord, guard: head && tail ? and(head, tail) : (head ?? tail) };
      });
      // Unguarded copies first: the renderer then reuses their addresses inside the guarded ones.
      for (const { copyWord, guard } of copies) if (guard === undefined) copyWord(block);
      for (const { copyWord, guard } of copies) if (guard !== undefined) block.if(guard, copyWord);
    };
    if (full === undefined || unguarded === 0) stage(copy, 0);
    else
      copy.if(
        full,
        (whole) => stage(whole, unguarded),
        (partial) => stage(partial, 0),
      );
  });
  b.barrier();
}
