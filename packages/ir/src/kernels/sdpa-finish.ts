// Folds the warps' partial softmaxes of one workgroup, then stores them as the split's partial.
import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { add, and, bitcast, eq, exp2, fma, lt, max, mul, shl, shr, sub } from '../expressions.js';
import {
  SDPA_LANE_DIMS,
  SDPA_NO_SCORE,
  SDPA_PASS_DIMS,
  SDPA_STAGE_WORDS,
  type SdpaBuilder,
  type SdpaRange,
  type SdpaState,
} from './sdpa-attend.js';
import { partialAt } from './sdpa-combine.js';
import {
  ALL_HEADS,
  forHead,
  headsKnob,
  reduceHeads,
  storeHeads,
  switchHeads,
} from './sdpa-heads.js';

/** Where the pass's partial goes: split `split` of `splits` in scratch `partials`. */
export interface SdpaPartialAt {
  /** The pass's first query head, and the heads of it that exist (1 to the `heads` knob). */
  readonly firstHead: Var<'u32'>;
  readonly headsHere: Var<'u32'>;
  readonly headDim: Expr<'u32'>;
  /** The pass's first dim: its 128 dims go to the partial's dims from there. */
  readonly groupDim: Expr<'u32'>;
  readonly nHead: Expr<'u32'>;
  readonly split: Expr<'u32'>;
  readonly splits: Expr<'u32'>;
}

/** Dim pairs of a head a pass folds. */
const FOLD_PAIRS = SDPA_PASS_DIMS / SDPA_LANE_DIMS;

/**
 * Folds the warps' (m, l, acc) into the workgroup's and stores it as the split's partial (layout
 * in sdpa-combine.ts): each warp puts its heads' m and l (the sum over its lanes) in shared
 * `folded` and its lanes' unscaled acc in its own stage of `k_stage`, and after one barrier each
 * thread takes a dim pair of a head: M = max_w m_w, then L = Σ_w l_w·exp2(m_w − M) and
 * acc = Σ_w acc_w·exp2(m_w − M) over the warps, warp 0's first, straight to `partials`.
 */
export function writeFolded(
  b: SdpaBuilder,
  range: SdpaRange,
  state: SdpaState,
  at: SdpaPartialAt,
): void {
  const { lane, warp, warps, pairs } = range;
  const { firstHead, headsHere, headDim, groupDim, nHead, split, splits } = at;
  const heads = headsKnob(b);
  const statsWords = mul(heads, 2);
  switchHeads(b, (block, n, tag) => {
    const names = ALL_HEADS.slice(0, n).map((h) => `l_sum${h}${tag}`);
    const sums = reduceHeads(block, 'add', names, state.l.slice(0, n));
    block.if(eq(lane, 0), (first) => {
      const base = mul(warp, statsWords);
      storeHeads(first, 'folded', base, state.m.slice(0, n));
      storeHeads(first, 'folded', add(base, n), sums);
    });
  });
  // Warp w's share of head h's dims at w·SDPA_STAGE_WORDS + h·128 + 4·lane + 2c.
  const own = b.let('fold_own', add(mul(warp, SDPA_STAGE_WORDS), shl(lane, 2)));
  // A lane's 4 dims are all in the head or all past it (head_dim is a multiple of 32).
  b.if(lt(shl(lane, 1), pairs), (column) =>
    ALL_HEADS.forEach((h) =>
      forHead(column, h, (head) => {
        const slot = h === 0 ? own : add(own, h * SDPA_PASS_DIMS);
        const words = state.acc[h]!.flat().map((value) => shareWord(range, value));
        head.storeVector('k_stage', slot, words as [Expr, Expr, Expr, Expr]);
      }),
    ),
  );
  b.barrier();
  const step = mul(warps, WARP_SIZE);
  b.for('fold_at', { start: b.localId(), end: mul(heads, FOLD_PAIRS), step }, (loop, i) => {
    const { foldHead, foldPair } = loop.let({
      foldHead: shr(i, Math.log2(FOLD_PAIRS)),
      foldPair: and(i, FOLD_PAIRS - 1),
    });
    loop.if(and(lt(foldHead, headsHere), lt(foldPair, pairs)), (fold) => {
      const most = fold.let('most', SDPA_NO_SCORE, 'f32');
      fold.for('w_max', { start: 0, end: warps }, (across, w) => {
        const m = across.load('folded', add(mul(w, statsWords), foldHead)) as Expr<'f32'>;
        across.assign(most, max(most, m));
      });
      const total = fold.let('total', 0, 'f32');
      const sums = [0, 1].map((e) => fold.let(`fold_sum${e}`, 0, 'f32'));
      const slot = fold.let('fold_slot', add(shl(foldHead, Math.log2(SDPA_PASS_DIMS)), shl(foldPair, 1))); // prettier-ignore
      fold.for('w_sum', { start: 0, end: warps }, (across, w) => {
        const base = across.let('stats_base', add(mul(w, statsWords), foldHead));
        const m = across.load('folded', base) as Expr<'f32'>;
        const l = across.load('folded', add(base, heads)) as Expr<'f32'>;
        const words = across.loadVector('k_stage', add(mul(w, SDPA_STAGE_WORDS), slot), ['fold_word0', 'fold_word1']); // prettier-ignore
        const factor = across.let('fold_factor', exp2(sub(m, most)));
        across.assign(total, fma(l, factor, total));
        words.forEach((word, e) => across.assign(sums[e]!, fma(shareValue(range, word), factor, sums[e]!))); // prettier-ignore
      });
      // The split's row of the head: (firstHead + h)·splits + split.
      const row = add(mul(add(firstHead, foldHead), splits), split);
      const where = partialAt(nHead, splits, headDim, row);
      fold.if(eq(foldPair, 0), (first) =>
        first.storeVector('partials', where.stats, [most, total]),
      );
      const dim = add(groupDim, shl(foldPair, 1));
      fold.storeVector('partials', add(where.acc, dim), sums as [Var<'f32'>, Var<'f32'>]);
    });
  });
}

/** A share as the stage's element (u32 words for an f16 cache), and back. */
const shareWord = (range: SdpaRange, value: Expr<'f32'>): Expr =>
  range.cache === 'f16' ? bitcast('u32', value) : value;
const shareValue = (range: SdpaRange, word: Var): Expr<'f32'> =>
  range.cache === 'f16' ? bitcast('f32', word) : (word as Var<'f32'>);
