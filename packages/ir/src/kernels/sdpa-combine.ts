// The second dispatch of decode attention: merges the splits' partial softmaxes of each query head.
import type { Expr } from '../body.js';
import type { StageDeclaration } from '../builder.js';
import {
  add,
  and,
  div,
  eq,
  exp2,
  fma,
  lt,
  max,
  min,
  mul,
  select,
  shl,
  shr,
  sub,
  u32,
} from '../expressions.js';
import { SDPA_NO_SCORE, u32Param, windowCuts, type SdpaBuilder } from './sdpa-attend.js';
import { X_GROUP, quantizeXQuarter } from './x-quantize.js';

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

/** Splits whose values the combine loads under one guard; every batch is loaded before any sum. */
const COMBINE_LOADS = 8;

/**
 * Fewest positions a split takes: two 8-position steps a warp (four 4-position steps at 8 heads);
 * below it a workgroup's fixed work (q loads, the fold) outweighs the range's. 64 at the default
 * schedule (4 warps, 4 heads), so 32/8 heads at n_kv 4096 fill 512 workgroups.
 */
export const SDPA_MIN_SPLIT = `warps * 4 * max(heads, 4)`;

/** SDPA_MIN_SPLIT as a body expression. */
export const minSplitOf = (b: SdpaBuilder): Expr<'u32'> =>
  mul(mul(b.schedule('warps'), 4), max(b.schedule('heads'), 4));

/** Positions a split takes: ceil(visible / splits) rounded up to whole tiles, at least the minimum. */
export function splitSpanOf(
  visible: Expr<'u32'>,
  splits: Expr<'u32'>,
  least: Expr<'u32'>,
): Expr<'u32'> {
  const even = shl(shr(add(div(add(visible, sub(splits, 1)), splits), 31), 5), 5);
  return max(even, least);
}

/** Most splits the combine weighs: the `splits` knob's largest value (a weight a split in shared). */
export const SDPA_MAX_SPLITS = 64;

/**
 * out[j][d] = Σ_s acc_s[d]·w_s / Σ_s L_s·w_s with w_s = exp2(M_s − M*), M* = max_s M_s, over the
 * `used` splits that had positions (a visible range is never empty, so the sum is > 0). A workgroup
 * is one warp and 32 dims of one query head: the lanes weigh the splits (lane s takes splits s,
 * s + 32), warp reductions give M* and the sum, the weights go to shared memory, and each lane then
 * sums its dim over the splits: one load and one fma a split. Every split's value is loaded with
 * the stats (batches past the `splits` knob pruned, past `used` skipped), so the combine waits for
 * memory once.
 */
function combineBody(b: SdpaBuilder, quantize: boolean): void {
  const splits = b.schedule('splits');
  const headDim = u32Param(b, 'head_dim');
  const nHead = u32Param(b, 'n_head');
  const nKv = u32Param(b, 'n_kv');
  const window = u32Param(b, 'window');
  const { head, lane } = b.let({ head: b.workgroupId(), lane: b.laneId() });
  const { d } = b.let({ d: add(mul(b.workgroupId('y'), SDPA_COMBINE_THREADS), lane) });
  const { visible } = b.let({ visible: select(windowCuts(nKv, window), window, nKv) });
  const { span } = b.let({ span: splitSpanOf(visible, splits, minSplitOf(b)) });
  // The splits that had positions (the rest stored nothing): never more than `splits`.
  const { used } = b.let({ used: div(add(visible, sub(span, 1)), span) });
  const { firstRow } = b.let({ firstRow: mul(head, splits) });
  // d < head_dim (a multiple of 32), so these loads need no guard; a split past `used` reads the last.
  const { at, last } = b.let({
    at: add(partialAt(nHead, splits, headDim, firstRow).acc, d),
    last: sub(used, 1),
  });
  // Split s's row (clamped to the last in use) and its acc value of this lane's dim.
  const fromOf = (into: SdpaBuilder, batch: string, s: Expr<'u32'>, u: number) =>
    into.let(`${batch}_from${u}`, min(s, last));
  const valueAt = (into: SdpaBuilder, from: Expr<'u32'>) =>
    into.load('partials', add(at, mul(from, headDim))) as Expr<'f32'>;
  // Split s's value loaded now, named `${batch}_value${u}`.
  const read = (into: SdpaBuilder, batch: string, s: Expr<'u32'>, u: number) => {
    const from = fromOf(into, batch, s, u);
    return { batch, s, from, value: into.let(`${batch}_value${u}`, valueAt(into, from)) };
  };
  // Lane s's splits s, s + 32, …: every stats load first (a split past `used` reads split 0's).
  const laneSplits = Array.from({ length: SDPA_MAX_SPLITS / SDPA_COMBINE_THREADS }, (_, k) => {
    const s = b.let(`lane_split${k}`, k === 0 ? lane : add(lane, k * SDPA_COMBINE_THREADS));
    const inUse = b.let(`lane_used${k}`, lt(s, used));
    const where = partialAt(nHead, splits, headDim, add(firstRow, select(inUse, s, 0))).stats;
    const [m, l] = b.loadVector('partials', where, [`stat${k}_m`, `stat${k}_l`]);
    return { s, used: inUse, m: m as Expr<'f32'>, l: l as Expr<'f32'> };
  });
  // Batch g's code, where it exists: past the `splits` knob pruned when the schedule is bound,
  // past the splits in use skipped.
  const inBatch = (into: SdpaBuilder, g: number, fill: (inside: SdpaBuilder) => void): void =>
    into.if(lt(u32(g * COMBINE_LOADS), splits), (known) =>
      known.if(lt(u32(g * COMBINE_LOADS), used), fill),
    );
  // Every split's value, COMBINE_LOADS a batch: a batch past `used` loads nothing.
  const batches = Array.from({ length: SDPA_MAX_SPLITS / COMBINE_LOADS }, (_, g) => {
    const batch = `first${g}`;
    const splitOf = (u: number) => u32(g * COMBINE_LOADS + u);
    if (g === 0) return Array.from({ length: COMBINE_LOADS }, (_, u) => read(b, batch, splitOf(u), u)); // prettier-ignore
    const reads = Array.from({ length: COMBINE_LOADS }, (_, u) => ({
      batch,
      s: splitOf(u),
      from: fromOf(b, batch, splitOf(u), u),
      value: b.let(`${batch}_value${u}`, 0, 'f32'),
    }));
    inBatch(b, g, (load) => {
      for (const { from, value } of reads) load.assign(value, valueAt(load, from));
    });
    return reads;
  });
  const laneMost = b.let('lane_most', SDPA_NO_SCORE, 'f32');
  for (const split of laneSplits)
    b.assign(laneMost, select(split.used, max(laneMost, split.m), laneMost));
  const most = b.reduce('max', 'most', laneMost);
  const laneTotal = b.let('lane_total', 0, 'f32');
  laneSplits.forEach((split, k) =>
    b.if(split.used, (weigh) => {
      const weight = weigh.let(`weight${k}`, exp2(sub(split.m, most)));
      weigh.store('weights', split.s, weight);
      weigh.assign(laneTotal, fma(split.l, weight, laneTotal));
    }),
  );
  const total = b.reduce('add', 'total', laneTotal);
  b.barrier();
  // The quantizing variant keeps each lane's result for the warp's shuffles after the guard.
  const result = quantize ? b.let('result', 0, 'f32') : undefined;
  b.if(lt(d, headDim), (inside) => {
    const acc = inside.let('acc', 0, 'f32');
    // A batch's weights loaded, then its splits summed in split order.
    const sum = (into: SdpaBuilder, reads: (typeof batches)[number]) => {
      const weights = reads.map(({ batch, from }, u) => into.let(`${batch}_weight${u}`, into.load('weights', from))); // prettier-ignore
      reads.forEach(({ s, value }, u) =>
        into.assign(acc, select(lt(s, used), fma(value, weights[u] as Expr<'f32'>, acc), acc)),
      );
    };
    batches.forEach((reads, g) => {
      if (g === 0) sum(inside, reads);
      else inBatch(inside, g, (more) => sum(more, reads));
    });
    if (result === undefined) inside.store('out', add(mul(head, headDim), d), div(acc, total));
    else {
      inside.assign(result, div(acc, total));
      inside.store('out', add(mul(head, headDim), d), result);
    }
  });
  if (result !== undefined)
    quantizeResults(
      b,
      result,
      add(mul(head, headDim), mul(b.workgroupId('y'), SDPA_COMBINE_THREADS)),
    );
}

/**
 * The warp's 32 results (one x group, as head_dim is a multiple of 32) quantized into x_quant and
 * x_factors exactly as a row-streaming mat-vec's first dispatch quantizes x: lanes 4t..4t+3 each
 * gather a quarter of the group (values 8p..8p+7, p = lane & 3) and run quantizeXQuarter, which
 * every quad computes alike; lanes 0..3 store the group's words, sums of 8 and scale.
 */
function quantizeResults(b: SdpaBuilder, result: Expr<'f32'>, first: Expr<'u32'>): void {
  const { part, groupIndex, groups } = b.let({
    part: and(b.laneId(), 3),
    groupIndex: div(first, X_GROUP),
    groups: div(mul(u32Param(b, 'n_head'), u32Param(b, 'head_dim')), X_GROUP),
  });
  const eight = Array.from({ length: 8 }, (_, i) =>
    b.shuffle('idx', `quarter${i}`, result, add(shl(part, 3), i)),
  );
  const { scale, sum, words } = quantizeXQuarter(b, eight, 'out_');
  b.if(lt(b.laneId(), 4), (store) => {
    const { wordAt } = store.let({ wordAt: add(mul(groupIndex, 16), shl(part, 1)) });
    words.forEach(({ high, low }, k) => {
      store.store('x_quant', k === 0 ? wordAt : add(wordAt, k), high);
      store.store('x_quant', add(wordAt, 8 + k), low);
    });
    store.store('x_factors', add(add(groups, mul(groupIndex, 4)), part), sum);
    store.if(eq(part, 0), (first) => first.store('x_factors', groupIndex, scale));
  });
}

/**
 * The combine dispatch of `entryPoint`'s op: a warp per 32 dims of a query head; with `quantize`,
 * out also quantized into x_quant and x_factors.
 */
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
