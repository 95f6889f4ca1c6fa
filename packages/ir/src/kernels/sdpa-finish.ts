// Folds the warps' partial softmaxes of one workgroup, then stores them as the split's partial.
import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import {
  add,
  and,
  bitcast,
  eq,
  exp2,
  lt,
  max,
  mul,
  select,
  shl,
  shr,
  sub,
} from '../expressions.js';
import {
  SDPA_NO_SCORE,
  SDPA_STAGE_WORDS,
  forLaneColumns,
  SDPA_Q_STRIDE,
  type SdpaBuilder,
  type SdpaRange,
  type SdpaState,
} from './sdpa-attend.js';
import { partialAt } from './sdpa-combine.js';
import {
  ALL_HEADS,
  forHead,
  headsKnob,
  loadHeads,
  reduceHeads,
  storeHeads,
  switchHeads,
} from './sdpa-heads.js';

/** Where the pass's output goes. */
export interface SdpaOutput {
  /** The pass's first query head. */
  readonly firstHead: Var<'u32'>;
  /** Query heads of the pass that exist (1 to the `heads` knob). */
  readonly headsHere: Var<'u32'>;
  readonly headDim: Expr<'u32'>;
}

/** The workgroup's softmax over its range, per head of the pass: max M and sum L (log2 units). */
export interface SdpaFolded {
  readonly most: readonly Var<'f32'>[];
  readonly total: readonly Var<'f32'>[];
}

/**
 * Folds the warps' (m, l, acc) into the workgroup's: M = the heads' max over warps,
 * L = Σ_w l_w·exp2(m_w − M), and in shared `q_scaled` (free once the tiles are done) the
 * unnormalized acc = Σ_w acc_w·exp2(m_w − M), summed one warp a round. The workgroup's split
 * of the KV range then stores (M, L, acc) as its partial (writePartial).
 */
export function foldWarps(b: SdpaBuilder, range: SdpaRange, state: SdpaState): SdpaFolded {
  const { lane, warp, warps } = range;
  const heads = ALL_HEADS;
  // Warp w's m then l of each head, in `q_scaled`: its last reads (the dots) are behind the tiles'
  // barriers, and the acc fold below writes it only after its first barrier.
  const statsWords = mul(headsKnob(b), 2);
  switchHeads(b, (block, n, tag) => {
    const names = heads.slice(0, n).map((h) => `l_sum${h}${tag}`);
    const sums = reduceHeads(block, 'add', names, state.l.slice(0, n));
    block.if(eq(lane, 0), (first) => {
      const base = mul(warp, statsWords);
      storeHeads(first, 'q_scaled', base, state.m.slice(0, n));
      storeHeads(first, 'q_scaled', add(base, n), sums);
    });
  });
  b.barrier();
  const most = heads.map((h) => b.let(`most${h}`, SDPA_NO_SCORE, 'f32'));
  b.for('w_max', { start: 0, end: warps }, (loop, w) => {
    switchHeads(loop, (block, n, tag) => {
      const names = heads.slice(0, n).map((h) => `wm${h}${tag}`);
      const ms = loadHeads(block, 'q_scaled', mul(w, statsWords), names);
      ms.forEach((m, h) => block.assign(most[h]!, max(most[h]!, m)));
    });
  });
  const total = heads.map((h) => b.let(`total${h}`, 0, 'f32'));
  b.for('w_sum', { start: 0, end: warps }, (loop, w) => {
    const base = mul(w, statsWords);
    switchHeads(loop, (block, n, tag) => {
      const ms = loadHeads(
        block,
        'q_scaled',
        base,
        heads.slice(0, n).map((h) => `sm${h}${tag}`),
      );
      const ls = loadHeads(
        block,
        'q_scaled',
        add(base, n),
        heads.slice(0, n).map((h) => `sl${h}${tag}`),
      );
      ms.forEach((m, h) =>
        block.assign(total[h]!, add(total[h]!, mul(ls[h]!, exp2(sub(m, most[h]!))))),
      );
    });
  });
  const factor = heads.map((h) => b.let(`factor${h}`, exp2(sub(state.m[h]!, most[h]!))));
  foldShares(b, range, state, factor);
  return { most, total };
}

/** Dims of a head one fold pass takes: two 64-dim columns, so 8 heads' fit one warp's stage. */
const FOLD_DIMS = 128;

/**
 * acc = Σ_w acc_w·factor_w into `q_scaled` (row h at h·SDPA_Q_STRIDE), FOLD_DIMS dims of every
 * head a pass: each warp writes its scaled share to its own stage (idle after the tiles' last
 * barrier), then the workgroup sums the warps' shares, warp 0's first, two dims a thread a trip.
 */
function foldShares(
  b: SdpaBuilder,
  range: SdpaRange,
  state: SdpaState,
  factor: readonly Var<'f32'>[],
): void {
  const { lane, warp, warps, pairs } = range;
  const own = b.let('fold_own', mul(warp, SDPA_STAGE_WORDS));
  const rows = mul(headsKnob(b), FOLD_DIMS);
  const columnsAPass = FOLD_DIMS / 64;
  for (let pass = 0; pass * FOLD_DIMS < SDPA_Q_STRIDE; pass++) {
    const firstColumn = pass * columnsAPass;
    // Uniform (head_dim is a param), so the barriers inside are too.
    b.if(lt(pass * (FOLD_DIMS / 2), pairs), (fold) => {
      forLaneColumns(fold, range, (column, c) => {
        if (c < firstColumn || c >= firstColumn + columnsAPass) return;
        const slot = column.let(
          `share_slot${c}`,
          add(own, add(shl(lane, 1), (c - firstColumn) * 64)),
        );
        ALL_HEADS.forEach((h) =>
          forHead(column, h, (head) => {
            const values = state.acc[h]![c]!.map((value) =>
              shareWord(range, mul(value, factor[h]!)),
            );
            head.storeVector(
              'k_stage',
              h === 0 ? slot : add(slot, h * FOLD_DIMS),
              values as [Expr, Expr],
            );
          }),
        );
      });
      fold.barrier();
      const step = mul(warps, WARP_SIZE * 2);
      fold.for(`fold_at${pass}`, { start: shl(fold.localId(), 1), end: rows, step }, (loop, i) => {
        const foldHead = loop.let(`fold_head${pass}`, shr(i, Math.log2(FOLD_DIMS)));
        const foldDim = loop.let(`fold_dim${pass}`, add(and(i, FOLD_DIMS - 1), pass * FOLD_DIMS));
        loop.if(lt(foldDim, shl(pairs, 1)), (sum) => {
          const sums = [0, 1].map((e) => sum.let(`fold_sum${pass}_${e}`, 0, 'f32'));
          sum.for(`fold_warp${pass}`, { start: 0, end: warps }, (across, w) => {
            const words = across.loadVector('k_stage', add(mul(w, SDPA_STAGE_WORDS), i), [
              `fold_word${pass}_0`,
              `fold_word${pass}_1`,
            ]);
            words.forEach((word, e) =>
              across.assign(sums[e]!, add(sums[e]!, shareValue(range, word))),
            );
          });
          const at = add(shl(foldHead, Math.log2(SDPA_Q_STRIDE)), foldDim);
          sum.storeVector('q_scaled', at, sums as [Var<'f32'>, Var<'f32'>]);
        });
      });
      fold.barrier();
    });
  }
}

/** A share as the stage's element (u32 words for an f16 cache), and back. */
const shareWord = (range: SdpaRange, value: Expr<'f32'>): Expr =>
  range.cache === 'f16' ? bitcast('u32', value) : value;
const shareValue = (range: SdpaRange, word: Var): Expr<'f32'> =>
  range.cache === 'f16' ? bitcast('f32', word) : (word as Var<'f32'>);

/** Where the pass's partial goes: split `split` of `splits` in scratch `partials`. */
export interface SdpaPartialAt extends SdpaOutput {
  readonly nHead: Expr<'u32'>;
  readonly split: Expr<'u32'>;
  readonly splits: Expr<'u32'>;
}

/**
 * Stores the pass's (M, L) and unnormalized acc per head that exists into `partials` (layout in
 * sdpa-combine.ts), head_dim values each, by the whole workgroup; the combine stage normalizes.
 */
export function writePartial(
  b: SdpaBuilder,
  range: SdpaRange,
  folded: SdpaFolded,
  at: SdpaPartialAt,
): void {
  const { firstHead, headsHere, headDim, nHead, split, splits } = at;
  const { most, total } = folded;
  // The split's row of head h: (firstHead + h)·splits + split.
  const rowOf = (h: Expr<'u32'>): Expr<'u32'> => add(mul(add(firstHead, h), splits), split);
  const pick = (values: readonly Expr<'f32'>[], h: Expr<'u32'>): Expr<'f32'> =>
    values
      .slice(1)
      .reduce<Expr<'f32'>>((picked, value, k) => select(eq(h, k + 1), value, picked), values[0]!);
  const local = b.let('stat_head', b.localId());
  b.if(lt(local, headsHere), (write) => {
    const where = partialAt(nHead, splits, headDim, rowOf(local));
    switchHeads(write, (block, n) =>
      block.storeVector('partials', where.stats, [
        pick(most.slice(0, n), local),
        pick(total.slice(0, n), local),
      ]),
    );
  });
  const rows = mul(headsKnob(b), SDPA_Q_STRIDE);
  // Two values a thread a trip (acc rows start at even words: head_dim and the stats are even).
  const step = mul(range.warps, WARP_SIZE * 2);
  b.for('oi', { start: shl(b.localId(), 1), end: rows, step }, (loop, i) => {
    const { outHead, outDim } = loop.let({
      outHead: shr(i, Math.log2(SDPA_Q_STRIDE)),
      outDim: and(i, SDPA_Q_STRIDE - 1),
    });
    loop.if(and(lt(outHead, headsHere), lt(outDim, headDim)), (write) => {
      const where = partialAt(nHead, splits, headDim, rowOf(outHead));
      const values = write.loadVector('q_scaled', i, ['out_0', 'out_1']);
      write.storeVector('partials', add(where.acc, outDim), [...values] as [Var, Var]);
    });
  });
}
