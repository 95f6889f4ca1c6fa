// The second dispatch of decode attention: merges the splits' partial softmaxes of each query head.
import type { Expr } from '../body.js';
import type { StageDeclaration } from '../builder.js';
import { add, div, exp2, fma, lt, max, mul, select, shl, shr, sub } from '../expressions.js';
import { SDPA_NO_SCORE, u32Param, windowCuts, type SdpaBuilder } from './sdpa-attend.js';

/** Threads of a combine workgroup: one warp, a lane per dim of 32 of one query head. */
export const SDPA_COMBINE_THREADS = 32;

/**
 * Scratch `partials` holds, per query head j and split s, (M, L) at 2·(j·splits + s) and the
 * unnormalized acc at n_head·splits·2 + (j·splits + s)·head_dim, so each acc row is 16-byte aligned.
 */
export const SDPA_PARTIALS_LENGTH = 'n_head * splits * (head_dim + 2)';

/** Where split `s` of head `head` keeps (M, L), and its acc row. */
export function partialAt(
  nHead: Expr<'u32'>,
  splits: Expr<'u32'>,
  headDim: Expr<'u32'>,
  row: Expr<'u32'>,
): { readonly stats: Expr<'u32'>; readonly acc: Expr<'u32'> } {
  return {
    stats: mul(row, 2),
    acc: add(mul(mul(nHead, splits), 2), mul(row, headDim)),
  };
}

/** Fewest positions a split takes: below it the per-workgroup work outweighs the range's. */
export const SDPA_MIN_SPLIT = 256;

/** Positions a split takes: ceil(visible / splits) rounded up to whole tiles, at least SDPA_MIN_SPLIT. */
export function splitSpanOf(visible: Expr<'u32'>, splits: Expr<'u32'>): Expr<'u32'> {
  const even = shl(shr(add(div(add(visible, sub(splits, 1)), splits), 31), 5), 5);
  return max(even, SDPA_MIN_SPLIT);
}

/** Most splits the combine weighs: the `splits` knob's largest value (a weight a split in shared). */
export const SDPA_MAX_SPLITS = 64;

/**
 * out[j][d] = Σ_s acc_s[d]·w_s / Σ_s L_s·w_s with w_s = exp2(M_s − M*), M* = max_s M_s, over the
 * `used` splits that had positions (a visible range is never empty, so the sum is > 0). A workgroup
 * is one warp and 32 dims of one query head: the lanes weigh the splits (lane s takes splits s,
 * s + 32), warp reductions give M* and the sum, the weights go to shared memory, and each lane then
 * sums its dim over the splits: one load and one fma a split.
 */
function combineBody(b: SdpaBuilder): void {
  const splits = b.schedule('splits');
  const headDim = u32Param(b, 'head_dim');
  const nHead = u32Param(b, 'n_head');
  const nKv = u32Param(b, 'n_kv');
  const window = u32Param(b, 'window');
  const { head, lane } = b.let({ head: b.workgroupId(), lane: b.laneId() });
  const { d } = b.let({ d: add(mul(b.workgroupId('y'), SDPA_COMBINE_THREADS), lane) });
  const { visible } = b.let({ visible: select(windowCuts(nKv, window), window, nKv) });
  const { span } = b.let({ span: splitSpanOf(visible, splits) });
  // The splits that had positions (the rest stored nothing): never more than `splits`.
  const { used } = b.let({ used: div(add(visible, sub(span, 1)), span) });
  const { firstRow } = b.let({ firstRow: mul(head, splits) });
  const statsOf = (loop: SdpaBuilder, s: Expr<'u32'>, name: string): Expr<'f32'>[] =>
    loop.loadVector('partials', partialAt(nHead, splits, headDim, add(firstRow, s)).stats, [
      `${name}_m`,
      `${name}_l`,
    ]) as Expr<'f32'>[];
  const laneMost = b.let('lane_most', SDPA_NO_SCORE, 'f32');
  b.for('s_max', { start: lane, end: used, step: SDPA_COMBINE_THREADS }, (loop, s) => {
    const [m] = statsOf(loop, s, 'max');
    loop.assign(laneMost, max(laneMost, m!));
  });
  const most = b.reduce('max', 'most', laneMost);
  const laneTotal = b.let('lane_total', 0, 'f32');
  b.for('s_weigh', { start: lane, end: used, step: SDPA_COMBINE_THREADS }, (loop, s) => {
    const [m, l] = statsOf(loop, s, 'weigh');
    const { weight } = loop.let({ weight: exp2(sub(m!, most)) });
    loop.store('weights', s, weight);
    loop.assign(laneTotal, fma(l!, weight, laneTotal));
  });
  const total = b.reduce('add', 'total', laneTotal);
  b.barrier();
  b.if(lt(d, headDim), (inside) => {
    const acc = inside.let('acc', 0, 'f32');
    const { at } = inside.let({ at: add(partialAt(nHead, splits, headDim, firstRow).acc, d) });
    inside.for('s_acc', { start: 0, end: used }, (loop, s) => {
      const value = loop.load('partials', at) as Expr<'f32'>;
      loop.assign(acc, fma(value, loop.load('weights', s) as Expr<'f32'>, acc));
      loop.assign(at, add(at, headDim));
    });
    inside.store('out', add(mul(head, headDim), d), div(acc, total));
  });
}

/** The combine dispatch of `entryPoint`'s op: a warp per 32 dims of a query head. */
export function sdpaCombineStage(entryPoint: string): StageDeclaration {
  return {
    entryPoint: `${entryPoint}_combine`,
    shared: [{ name: 'weights', element: 'f32', length: `${SDPA_MAX_SPLITS}` }],
    launch: {
      workgroupSize: `${SDPA_COMBINE_THREADS}`,
      grid: ['n_head', `ceil_div(head_dim, ${SDPA_COMBINE_THREADS})`, '1'],
    },
    body: combineBody,
  };
}
