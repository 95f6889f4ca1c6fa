// The body of decode attention: one heads variant's pass over a range of cached positions.
import { WARP_SIZE } from '../body.js';
import type { Local, Value } from '../expression-methods.js';
import { u32 } from '../expressions.js';
import { loadHeads, times, typed } from './sdpa-heads.js';
import type { SdpaBuilder, SdpaHeads } from './sdpa-heads.js';
import { itemAt, pair, type Pair } from './tuples.js';
import type { SdpaPass } from './sdpa-decode.js';
import type { SdpaCache } from './sdpa-shape.js';

/** Whether a sliding window hides some of the n_kv positions (window 0 = none). */
export const windowCuts = (nKv: Value<'u32'>, window: Value<'u32'>): Value<'bool'> =>
  window.gt(0).and(nKv.gt(window));

/** Positions a split's span is rounded to. */
export const SDPA_TILE = WARP_SIZE;
/** Words of `k_stage` a warp holds for the fold: 128 dims of 8 heads (stashWarp). */
export const SDPA_STAGE_WORDS = 1024;
/** Dims a pass accumulates: lane l owns 4l..4l+3 (two columns of 2); a wider head takes two passes. */
export const SDPA_PASS_DIMS = 4 * WARP_SIZE;
/**
 * The running max before any position: finite, so masked lanes give exp2(sentinel − m) = 0 and a
 * warp that saw nothing rescales by exp2(0) = 1 instead of exp2(−inf + inf) = NaN.
 */
export const SDPA_NO_SCORE = -3e38;
const COLUMNS = [0, 1] as const;

/** A query head's running max m, this lane's share of the sum l, and acc[c][e]: dim 4·lane + 2c + e. */
export interface HeadState {
  readonly m: Local<'f32'>;
  readonly l: Local<'f32'>;
  readonly acc: Pair<Pair<Local<'f32'>>>;
}

/** Fresh state for n heads: max at the sentinel, sums and accumulators zero. */
export function sdpaState(b: SdpaBuilder, n: SdpaHeads): HeadState[] {
  const m = times(n, () => b.let('m', SDPA_NO_SCORE, 'f32'));
  const l = times(n, () => b.let('l', 0, 'f32'));
  const acc = times(n, () => pair(() => pair(() => b.let('head_acc', 0, 'f32'))));
  return m.map((head, h) => ({ m: head, l: itemAt(l, h), acc: itemAt(acc, h) }));
}

/** A column's q dim, then each head's q·scale·log2e at that dim and the next. */
type Query = Pair<{ readonly dim: Local<'u32'>; readonly heads: Pair<Local<'f32'>>[] }>;

// Attends n query heads to positions [start, end) (the plan in sdpa-decode.ts) in interleaved
// steps; workgroup-uniform: a warp past the range runs its steps with every position masked.
export function attendRange(
  b: SdpaBuilder,
  pass: SdpaPass,
  state: HeadState[],
  n: SdpaHeads,
): void {
  const { cache, lane, warp, warps, start, end, rowWords, headBase, wide, groupDim } = pass;
  const step = n === 8 ? 4 : 8;
  const scores = step * n;
  // A score ends in 2^spread lanes; its index in the step is lane >> spread (position · n + head).
  const spread = 5 - Math.log2(scores);
  const headBits = Math.log2(n);
  const perRound = warps.mul(step);
  const rounds = b.let('rounds', end.sub(start).add(perRound.sub(1)).div(perRound));
  const firstAt = b.let('first_at', start.add(warp.mul(step)));
  const lastRow = b.let('last_row', end.sub(1));
  const lanePosition = b.let('lane_position', lane.shr(spread + headBits));
  const laneHead = b.let('lane_head', lane.shr(spread).and(n - 1));
  // One lane of each score's copies adds it to l and stores it.
  const canonical = b.let('canonical', lane.and((1 << spread) - 1).eq(0));
  const keyWord = b.let('key_word', laneWord(pass, u32(0)));
  const valueWord = b.let('value_word', laneWord(pass, groupDim));
  const nearQuery = loadQuery(b, pass, n, 0);
  // Where a lane's mask bit is set, for each offset of the reduce-scatter.
  const upper = [16, 8, 4, 2, 1]
    .filter((offset) => offset >= 1 << spread)
    .map((offset) => ({ offset, high: b.let('upper', lane.and(offset).ne(0)) }));

  b.for('round', { start: 0, end: rounds }, (_, round) => {
    const stepAt = b.let('step_at', firstAt.add(round.mul(perRound)));
    // Two buffers of p a warp, by round parity: a step's stores never meet the last step's reads.
    const probBase = b.let('prob_base', warp.shl(1).add(round.and(1)).mul(scores));
    const rows = times(step, (p) =>
      b.let('row', (p === 0 ? stepAt : stepAt.add(p)).min(lastRow).mul(rowWords).add(headBase)),
    );
    // The lane's 4 dims at each position: one 8-byte (f16) or 16-byte (f32) load, by column.
    const load = (memory: 'k' | 'v', word: Value<'u32'>, hint: string) =>
      rows.map((row) => loadColumns(b, cache, memory, row.add(word), hint));
    // Every K and V word of the step in flight before the first is used.
    const keys = load('k', keyWord, 'kw');
    const values = load('v', valueWord, 'vw');
    // The lane's part of q_h · K[t] over its 4 dims, position by position, head by head.
    const dot = (words: readonly Pair<readonly Local[]>[], query: Query): Local<'f32'>[] =>
      words.flatMap((columns) => {
        const [[k00, k01], [k10, k11]] = pair((c) => columnValues(b, cache, columns[c], 'key'));
        return times(n, (h) => {
          const [[q00, q01], [q10, q11]] = pair((c) => itemAt(query[c].heads, h));
          return b.let('s', q11.fma(k11, q10.fma(k10, q01.fma(k01, q00.mul(k00)))));
        });
      });
    b.if(round.eq(0), () => scaleQuery(b, pass, nearQuery));
    const score = reduceScatter(b, dot(keys, nearQuery), upper, spread);
    // K's dims 128-255 of a wide head (uniform: head_dim is a param): their own reduce-scatter.
    b.if(wide, () => {
      const farKeys = load('k', b.let('far_word', laneWord(pass, u32(SDPA_PASS_DIMS))), 'kw');
      const farQuery = loadQuery(b, pass, n, SDPA_PASS_DIMS);
      scaleQuery(b, pass, farQuery);
      b.assign(score, score.add(reduceScatter(b, dot(farKeys, farQuery), upper, spread)));
    });
    const visible = b.let('visible', stepAt.add(lanePosition).lt(end));
    const masked = b.let('masked', visible.select(score, SDPA_NO_SCORE));
    // The step's max of each head: over the lanes of the head's positions, then one lane a head.
    const stepMax = b.let('step_max', masked);
    for (let offset = 16; offset >= 1 << (spread + headBits); offset >>= 1)
      b.assign(stepMax, stepMax.max(b.shuffle('xor', 'step_max_xor', stepMax, offset)));
    const newMax = state.map(({ m }, h) =>
      b.let('new_max', m.max(b.shuffle('idx', 'head_max', stepMax, h << spread))),
    );
    // This lane's head's new max.
    const mine = newMax
      .slice(1)
      .reduce<Value<'f32'>>((picked, value, k) => laneHead.eq(k + 1).select(value, picked), itemAt(newMax, 0)); // prettier-ignore
    const prob = b.let('p', visible.select(masked.sub(mine).exp2(), 0));
    state.forEach(({ m, l, acc }, h) => {
      const alpha = b.let('alpha', m.sub(itemAt(newMax, h)).exp2());
      const share = n === 1 ? canonical : canonical.and(laneHead.eq(h));
      b.assign(l, l.fma(alpha, share.select(prob, 0)));
      b.assign(m, itemAt(newMax, h));
      for (const value of acc.flat()) b.assign(value, value.mul(alpha));
    });
    b.if(canonical, () => b.store('probs', probBase.add(lane.shr(spread)), prob));
    b.barrier();
    // acc_h += p_h(t) · V[t]: the heads' p of a position in one broadcast (two at 8 heads).
    values.forEach((columns, p) => {
      const probs = loadHeads(b, 'probs', probBase.add(p * n), n, 'pv');
      for (const c of COLUMNS) {
        const dims = columnValues(b, cache, columns[c], 'val');
        state.forEach(({ acc }, h) => {
          for (const e of COLUMNS) b.assign(acc[c][e], itemAt(probs, h).fma(dims[e], acc[c][e]));
        });
      }
    });
  });
}

// The lane's first word of the 128 dims from `from` in a head row, wrapped into the head (still
// aligned): q is zero past head_dim, so a wrapped K word adds nothing and a wrapped V word lands in
// dims nobody stores, while the warp still reads whole sectors.
function laneWord({ cache, lane, headWords }: SdpaPass, from: Value<'u32'>): Value<'u32'> {
  const dims = from.add(lane.shl(2));
  return (cache === 'f16' ? dims.shr(1) : dims).rem(headWords);
}

/** The cache words of the lane's 4 dims at `index`, by column: one f16 word or two f32 words each. */
function loadColumns(b: SdpaBuilder, cache: SdpaCache, memory: 'k' | 'v', index: Value<'u32'>, hint: string): Pair<readonly Local[]> {
  if (cache === 'f16') {
    const [low, high] = b.loadVector(memory, index, [hint, hint]);
    return [[low], [high]];
  }
  const [w0, w1, w2, w3] = b.loadVector(memory, index, [hint, hint, hint, hint]);
  return [[w0, w1], [w2, w3]];
} // prettier-ignore

/** A column's 2 dims: an f16 word's halves (unpacked into locals), or the two f32 words. */
function columnValues(b: SdpaBuilder, cache: SdpaCache, words: readonly Local[], hint: string): Pair<Value<'f32'>> {
  if (cache === 'f32') return pair((e) => typed('f32', itemAt(words, e)));
  const word = typed('u32', itemAt(words, 0));
  return pair((half) => b.let(hint, word.unpackHalf(half)));
} // prettier-ignore

/** Loads q for the lane's dims of the 128 from `from`, each head's in bounds (see scaleQuery). */
function loadQuery(b: SdpaBuilder, pass: SdpaPass, n: SdpaHeads, from: number): Query {
  const { lane, headDim, firstHead, headsHere } = pass;
  return pair((c) => {
    const dim = b.let('q_dim', lane.shl(2).add(from + 2 * c));
    const heads = times(n, (h) => {
      // In bounds wherever it is not wanted: the group's last head, the head's last dims.
      const row = firstHead.add(h).min(firstHead.add(headsHere.sub(1)));
      const index = b.let('q_index', row.mul(headDim).add(dim.min(headDim.sub(2))));
      return pair((e) =>
        b.let('q_value', typed('f32', b.load('q', e === 0 ? index : index.add(e)))),
      );
    });
    return { dim, heads };
  });
}

/** q·scale·log2e, zero past head_dim and the group's heads. */
function scaleQuery(b: SdpaBuilder, { headDim, headsHere, qScale }: SdpaPass, query: Query): void {
  for (const { dim, heads } of query)
    heads.forEach((values, h) => {
      const inHead = dim.lt(headDim);
      const wanted = b.let('q_wanted', h === 0 ? inHead : inHead.and(u32(h).lt(headsHere)));
      for (const value of values) b.assign(value, wanted.select(value.mul(qScale), 0));
    });
}

/**
 * Sums each of the step's scores over the 32 lanes and leaves score lane >> spread in that lane:
 * each xor stage a lane keeps half its values (the upper half where its mask bit is set) and adds
 * its partner's copy of them, then butterflies over the low `spread` bits give the copies the total.
 */
function reduceScatter(
  b: SdpaBuilder,
  values: readonly Value<'f32'>[],
  upper: readonly { readonly offset: number; readonly high: Value<'bool'> }[],
  spread: number,
): Local<'f32'> {
  let kept = values;
  for (const { offset, high } of upper) {
    const top = kept.slice(kept.length / 2);
    kept = kept.slice(0, top.length).map((low, j) => {
      const other = b.shuffle('xor', 'scatter', high.select(low, itemAt(top, j)), offset);
      return b.let('kept', high.select(itemAt(top, j), low).add(other));
    });
  }
  const total = b.let('score', itemAt(kept, 0));
  for (let offset = (1 << spread) >> 1; offset >= 1; offset >>= 1)
    b.assign(total, total.add(b.shuffle('xor', 'score_xor', total, offset)));
  return total;
}
