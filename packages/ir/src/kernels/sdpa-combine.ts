// The second dispatch of decode attention: merges the splits' partial softmaxes of each query head.
import type { StageDeclaration } from '../builder.js';
import type { Value } from '../expression-methods.js';
import { f32, u32 } from '../expressions.js';
import { SDPA_NO_SCORE, windowCuts } from './sdpa-attend.js';
import { times, typed, u32Param, type SdpaBuilder } from './sdpa-heads.js';
import { itemAt, pair } from './tuples.js';
import { X_GROUP, quantizeXQuarter } from './x-quantize.js';

/** Threads of a combine workgroup: one warp, a lane per dim of 32 of one query head. */
export const SDPA_COMBINE_THREADS = 32;

// Scratch `partials`: per query head j and split s, (M, L) at 2·(j·splits + s), then the unscaled
// acc at n_head·splits·2 + (j·splits + s)·head_dim, so each acc row is 16-byte aligned.
export const SDPA_PARTIALS_LENGTH = 'n_head * splits * (head_dim + 2)';

/** Where split `s` of head `head` keeps (M, L), and its acc row. */
export function partialAt(nHead: Value<'u32'>, splits: Value<'u32'>, headDim: Value<'u32'>, row: Value<'u32'>) {
  return { stats: row.mul(2), acc: nHead.mul(splits).mul(2).add(row.mul(headDim)) };
} // prettier-ignore

/** Splits whose values the combine loads under one guard; every batch is loaded before any sum. */
const COMBINE_LOADS = 8;

// Fewest positions a split takes: two steps a warp; below it a workgroup's fixed work (q loads,
// the fold) outweighs the range's. 64 at the default schedule: 32/8 heads at n_kv 4096 fill 512.
export const SDPA_MIN_SPLIT = `warps * 4 * max(heads, 4)`;

/** SDPA_MIN_SPLIT as a body expression. */
export const minSplitOf = (b: SdpaBuilder): Value<'u32'> =>
  b.schedule('warps').mul(4).mul(b.schedule('heads').max(4));

/** Positions a split takes: ceil(visible / splits) rounded up to whole tiles, at least the minimum. */
export const splitSpanOf = (visible: Value<'u32'>, splits: Value<'u32'>, least: Value<'u32'>) =>
  visible.add(splits.sub(1)).div(splits).add(31).shr(5).shl(5).max(least);

/** Most splits the combine weighs: the `splits` knob's largest value (a weight a split in shared). */
export const SDPA_MAX_SPLITS = 64;

/**
 * out[j][d] = Σ_s acc_s[d]·w_s / Σ_s L_s·w_s, w_s = exp2(M_s − M*), over the `used` splits. A
 * workgroup is one warp on 32 dims of a query head: lane s weighs splits s and s + 32, the weights
 * go through shared memory, and each lane sums its dim over the splits. Every value is loaded with
 * the stats (batches past the `splits` knob pruned, past `used` skipped): one wait for memory.
 */
function combineBody(b: SdpaBuilder, quantize: boolean): void {
  const splits = b.schedule('splits');
  const headDim = u32Param(b, 'head_dim');
  const nHead = u32Param(b, 'n_head');
  const nKv = u32Param(b, 'n_kv');
  const window = u32Param(b, 'window');
  const { head, lane } = b.let({ head: b.workgroupId(), lane: b.laneId() });
  const { d } = b.let({ d: b.workgroupId('y').mul(SDPA_COMBINE_THREADS).add(lane) });
  const { visible } = b.let({ visible: windowCuts(nKv, window).select(window, nKv) });
  const { span } = b.let({ span: splitSpanOf(visible, splits, minSplitOf(b)) });
  // The splits that had positions (the rest stored nothing): never more than `splits`.
  const { used } = b.let({ used: visible.add(span.sub(1)).div(span) });
  const { firstRow } = b.let({ firstRow: head.mul(splits) });
  // d < head_dim (a multiple of 32), so these loads need no guard; a split past `used` reads the last.
  const { at, last } = b.let({
    at: partialAt(nHead, splits, headDim, firstRow).acc.add(d),
    last: used.sub(1),
  });
  const valueAt = (row: Value<'u32'>) => typed('f32', b.load('partials', at.add(row.mul(headDim))));
  // Lane s's splits s, s + 32: every stats load first (a split past `used` reads split 0's).
  const laneSplits = pair((k) => {
    const s = b.let('lane_split', k === 0 ? lane : lane.add(k * SDPA_COMBINE_THREADS));
    const inUse = b.let('lane_used', s.lt(used));
    const where = partialAt(nHead, splits, headDim, firstRow.add(inUse.select(s, 0))).stats;
    const [m, l] = b.loadVector('partials', where, ['stat_m', 'stat_l']);
    return { s, inUse, m: typed('f32', m), l: typed('f32', l) };
  });
  // Split s's row, clamped to the last in use, and its value of this lane's dim, batch by batch.
  const batches = times(SDPA_MAX_SPLITS / COMBINE_LOADS, (g) => {
    const reads = times(COMBINE_LOADS, (u) => {
      const s = u32(g * COMBINE_LOADS + u);
      const row = b.let('split_row', s.min(last));
      return { s, row, value: b.let('value', g === 0 ? valueAt(row) : f32(0)) };
    });
    if (g > 0) inBatch(b, g, used, () => reads.forEach(({ row, value }) => b.assign(value, valueAt(row)))); // prettier-ignore
    return reads;
  });
  const laneMost = b.let('lane_most', SDPA_NO_SCORE, 'f32');
  for (const { inUse, m } of laneSplits)
    b.assign(laneMost, inUse.select(laneMost.max(m), laneMost));
  const most = b.reduce('max', 'most', laneMost);
  const laneTotal = b.let('lane_total', 0, 'f32');
  for (const { s, inUse, m, l } of laneSplits)
    b.if(inUse, () => {
      const weight = b.let('weight', m.sub(most).exp2());
      b.store('weights', s, weight);
      b.assign(laneTotal, l.fma(weight, laneTotal));
    });
  const total = b.reduce('add', 'total', laneTotal);
  b.barrier();
  // The quantizing variant keeps each lane's result for the warp's shuffles after the guard.
  const result = quantize ? b.let('result', 0, 'f32') : undefined;
  b.if(d.lt(headDim), () => {
    const acc = b.let('acc', 0, 'f32');
    // A batch's weights loaded, then its splits summed in split order.
    batches.forEach((reads, g) => {
      const sum = () => {
        const weights = reads.map(({ row }) =>
          typed('f32', b.let('weight', b.load('weights', row))),
        );
        reads.forEach(({ s, value }, u) =>
          b.assign(acc, s.lt(used).select(value.fma(itemAt(weights, u), acc), acc)),
        );
      };
      if (g === 0) sum();
      else inBatch(b, g, used, sum);
    });
    const outAt = head.mul(headDim).add(d);
    if (result === undefined) b.store('out', outAt, acc.div(total));
    else {
      b.assign(result, acc.div(total));
      b.store('out', outAt, result);
    }
  });
  const first = head.mul(headDim).add(b.workgroupId('y').mul(SDPA_COMBINE_THREADS));
  if (result !== undefined) quantizeResults(b, result, first);
}

/**
 * `fill` where batch g > 0 has splits: past the `splits` knob pruned when the schedule is bound,
 * past the splits in use skipped.
 */
function inBatch(b: SdpaBuilder, g: number, used: Value<'u32'>, fill: () => void): void {
  const first = u32(g * COMBINE_LOADS);
  b.if(first.lt(b.schedule('splits')), () => b.if(first.lt(used), fill));
}

/**
 * The warp's 32 results (one x group, as head_dim is a multiple of 32) quantized into x_quant and
 * x_factors exactly as a row-streaming mat-vec's first dispatch quantizes x: lanes 4t..4t+3 each
 * gather a quarter of the group (values 8p..8p+7, p = lane & 3) and run quantizeXQuarter, which
 * every quad computes alike; lanes 0..3 store the group's words, sums of 8 and scale.
 */
function quantizeResults(b: SdpaBuilder, result: Value<'f32'>, first: Value<'u32'>): void {
  const { part, groupIndex, groups } = b.let({
    part: b.laneId().and(3),
    groupIndex: first.div(X_GROUP),
    groups: u32Param(b, 'n_head').mul(u32Param(b, 'head_dim')).div(X_GROUP),
  });
  const eight = times(8, (i) => b.shuffle('idx', 'quarter', result, part.shl(3).add(i)));
  const { scale, sum, words } = quantizeXQuarter(b, eight, 'out_');
  b.if(b.laneId().lt(4), () => {
    const { wordAt } = b.let({ wordAt: groupIndex.mul(16).add(part.shl(1)) });
    words.forEach(({ high, low }, k) => {
      b.store('x_quant', k === 0 ? wordAt : wordAt.add(k), high);
      b.store('x_quant', wordAt.add(8 + k), low);
    });
    b.store('x_factors', groups.add(groupIndex.mul(4)).add(part), sum);
    b.if(part.eq(0), () => b.store('x_factors', groupIndex, scale));
  });
}

/** The combine dispatch of `entryPoint`'s op; with `quantize`, out also goes to x_quant. */
export function sdpaCombineStage(entryPoint: string, quantize = false): StageDeclaration {
  return {
    entryPoint: `${entryPoint}_combine`,
    shared: [{ name: 'weights', element: 'f32', length: `${SDPA_MAX_SPLITS}` }],
    launch: {
      workgroupSize: `${SDPA_COMBINE_THREADS}`,
      grid: ['n_head', `ceil_div(head_dim, ${SDPA_COMBINE_THREADS})`, '1'],
    },
    body: (b) => combineBody(b, quantize),
  };
}
