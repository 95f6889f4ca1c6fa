// The body of decode attention: a workgroup's pass over a range of cached positions.
import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import type { BodyBuilder, Declared } from '../builder.js';
import {
  add,
  and,
  div,
  eq,
  exp2,
  fma,
  gt,
  lt,
  max,
  min,
  mul,
  ne,
  select,
  shl,
  shr,
  sub,
  unpackHalf,
  rem,
  u32,
} from '../expressions.js';
import { ALL_HEADS, loadHeads, switchHeads, type SdpaHeads } from './sdpa-heads.js';
import type { SdpaCache } from './sdpa-shape.js';
import type { ScalarType } from '../types.js';

export type SdpaBuilder = BodyBuilder<Declared>;

/** A u32 param (the builder types params loosely over both caches' declarations). */
export const u32Param = (b: SdpaBuilder, name: string): Expr<'u32'> => b.param(name) as Expr<'u32'>;

/** Whether a sliding window hides some of the n_kv positions (window 0 = none). */
export const windowCuts = (nKv: Expr<'u32'>, window: Expr<'u32'>): Expr<'bool'> =>
  and(gt(window, 0), gt(nKv, window));

/** Positions a split's span is rounded to. */
export const SDPA_TILE = WARP_SIZE;
/** Words of `k_stage` a warp holds for the fold: 128 dims of 8 heads (writeFolded). */
export const SDPA_STAGE_WORDS = 1024;
/**
 * The running max before any position: finite, so masked lanes give exp2(sentinel − m) = 0 and a
 * warp that saw nothing rescales by exp2(0) = 1 instead of exp2(−inf + inf) = NaN.
 */
export const SDPA_NO_SCORE = -3e38;

/** Per query head of the pass: running max m, this lane's share of the sum l, and its dims of acc. */
export interface SdpaState {
  readonly m: readonly Var<'f32'>[];
  readonly l: readonly Var<'f32'>[];
  /** acc[h][c][e]: head h, dim 4·lane + 2c + e of the pass's 128. */
  readonly acc: readonly (readonly (readonly Var<'f32'>[])[])[];
}

/** What the attention pass over one position range needs. */
export interface SdpaRange {
  readonly cache: SdpaCache;
  readonly lane: Var<'u32'>;
  readonly warp: Var<'u32'>;
  readonly warps: Expr<'u32'>;
  /** Words of one position of one KV head (head_dim halves or values). */
  readonly headWords: Var<'u32'>;
  /** Words between consecutive positions (all KV heads). */
  readonly rowWords: Var<'u32'>;
  /** This KV head's first word in a position's row. */
  readonly headBase: Var<'u32'>;
  readonly headDim: Expr<'u32'>;
  /** The pass's first query head, the heads of it that exist (up to the `heads` knob), and q's factor scale·log2e. */
  readonly firstHead: Var<'u32'>;
  readonly headsHere: Var<'u32'>;
  readonly qScale: Var<'f32'>;
  /** Whether head_dim exceeds 128: K's columns 2 and 3 join every pass's scores. */
  readonly wide: Var<'bool'>;
  /** The pass's dims: 128 from `groupDim` (0, or 128 for the second pass of a wide head). */
  readonly groupDim: Var<'u32'>;
  /** Dim pairs of the pass: min(head_dim − groupDim, 128) / 2; lane l owns pairs 2l and 2l + 1. */
  readonly pairs: Var<'u32'>;
  /** The positions [start, end) this workgroup attends to. */
  readonly start: Var<'u32'>;
  readonly end: Var<'u32'>;
}

/** Values a cached word holds: two halves, or one f32. */
export const valuesPerWord = (cache: SdpaCache): number => (cache === 'f16' ? 2 : 1);
/** Dims a lane owns of each of a pass's columns (2 of its 4 consecutive dims), and the columns (128 dims). */
export const SDPA_LANE_DIMS = 2;
export const SDPA_COLUMNS = 2;
/** Dims a pass accumulates: a wider head (up to 256) takes a second pass. */
export const SDPA_PASS_DIMS = SDPA_COLUMNS * SDPA_LANE_DIMS * WARP_SIZE;
/** The pairs of dims a lane owns of 128: 4·lane + 2c + {0, 1} for c = 0, 1. */
const COLUMNS = [0, 1] as const;

/** Fresh state: max at the sentinel, sums and accumulators zero. */
export function sdpaState(b: SdpaBuilder): SdpaState {
  // Every head the spec can carry: a bound schedule drops the registers of heads it leaves out.
  const heads = ALL_HEADS;
  const chunks = Array.from({ length: SDPA_COLUMNS }, (_, c) => c);
  const values = Array.from({ length: SDPA_LANE_DIMS }, (_, e) => e);
  return {
    m: heads.map((h) => b.let(`m${h}`, SDPA_NO_SCORE, 'f32')),
    l: heads.map((h) => b.let(`l${h}`, 0, 'f32')),
    acc: heads.map((h) =>
      chunks.map((c) => values.map((e) => b.let(`acc${h}_${c}_${e}`, 0, 'f32'))),
    ),
  };
}

/**
 * Positions a warp takes a step with n query heads: the step's n·step scores (8 to 32) are spread
 * over the 32 lanes by the reduce-scatter, and its K and V words stay in registers.
 */
export const stepPositions = (n: SdpaHeads): number => (n === 8 ? 4 : 8);

/**
 * Attends the pass's query heads to positions [start, end), accumulating the pass's 128 dims. Lane
 * l owns dims 4l..4l+3 of them (one 8-byte f16 or 16-byte f32 load a position), and holds q·scale·
 * log2e of its near dims in registers (loaded before the loop, scaled in the first step once its K
 * and V loads are issued). The warps take interleaved steps of `stepPositions(heads)` positions;
 * each step issues every K and V load of its positions before it uses one (K's dims 128-255 of a
 * wide head follow, apart), then each lane dots its dims with every head's q, a reduce-scatter over
 * the lanes sums the step's scores (a lane ends with one score, held by 1, 2 or 4 lanes), the
 * online softmax folds them in, p goes through shared `probs` (one barrier a step; two buffers by
 * step parity, so the next step's stores need no second), and each lane adds p·V into its dims.
 * The loop is workgroup-uniform: a warp past the range runs its steps with every position masked.
 */
export function attendRange(b: SdpaBuilder, range: SdpaRange, state: SdpaState): void {
  switchHeads(b, (block, n, tag) => attendSteps(block, range, state, n, tag));
}

/** The steps of one heads variant (`tag` suffixes its locals). */
function attendSteps(
  b: SdpaBuilder,
  range: SdpaRange,
  state: SdpaState,
  n: SdpaHeads,
  tag: string,
): void {
  const { cache, lane, warp, warps, start, end, rowWords, headBase, wide, groupDim } = range;
  const { headDim, firstHead, headsHere, qScale } = range;
  const name = (base: string): string => `${base}${tag}`;
  const step = stepPositions(n);
  const scores = step * n;
  // A score ends in 2^spread lanes; its index in the step is lane >> spread (position · n + head).
  const spread = 5 - Math.log2(scores);
  const headBits = Math.log2(n);
  const positions = Array.from({ length: step }, (_, p) => p);
  const heads = ALL_HEADS.slice(0, n);
  const perRound = mul(warps, step);
  const local = <T extends ScalarType>(base: string, value: Expr<T>): Var<T> =>
    b.let(name(base), value);
  const rounds = local('rounds', div(add(sub(end, start), sub(perRound, 1)), perRound));
  const firstAt = local('first_at', add(start, mul(warp, step)));
  const lastRow = local('last_row', sub(end, 1));
  const lanePosition = local('lane_position', shr(lane, spread + headBits));
  const laneHead = local('lane_head', and(shr(lane, spread), n - 1));
  // One lane of each score's copies adds it to l and stores it.
  const canonical = local('canonical', eq(and(lane, (1 << spread) - 1), 0));
  // The lane's first word of K's first 128 dims and of the pass's V dims in a head row.
  const keyWord = local('key_word', laneWord(range, u32(0)));
  const valueWord = local('value_word', laneWord(range, groupDim));
  // q·scale·log2e of the lane's dims of the first 128, zero past head_dim and the group, held for
  // the whole range (loaded here, scaled in the first step once its K and V loads are issued); the
  // dims past 128 of a wide head are read from L1 a step.
  const queryOf = (block: SdpaBuilder, from: number, suffix: string) =>
    COLUMNS.map((c) => {
      const dim = block.let(name(`q_dim${c}${suffix}`), add(shl(lane, 2), from + 2 * c));
      return heads.map((h) => {
        const wanted = (at: SdpaBuilder) => at.let(name(`q_wanted${h}_${c}${suffix}`), h === 0 ? lt(dim, headDim) : and(lt(dim, headDim), lt(h, headsHere))); // prettier-ignore
        // In bounds wherever it is not wanted: the group's last head, the head's last dims.
        const index = block.let(name(`q_index${h}_${c}${suffix}`), add(mul(min(add(firstHead, h), add(firstHead, sub(headsHere, 1))), headDim), min(dim, sub(headDim, 2)))); // prettier-ignore
        const values = [0, 1].map((e) => block.let(name(`q${h}_${c}_${e}${suffix}`), block.load('q', e === 0 ? index : add(index, e)) as Expr<'f32'>)); // prettier-ignore
        return { wanted, values };
      });
    });
  const scaleQuery = (block: SdpaBuilder, query: ReturnType<typeof queryOf>): void =>
    query.flat().forEach(({ wanted, values }) => {
      const keep = wanted(block);
      values.forEach((value) => block.assign(value, select(keep, mul(value, qScale), 0)));
    });
  const nearQuery = queryOf(b, 0, '');
  // Where a lane's mask bit is set, for each offset of the reduce-scatter.
  const upper = new Map<number, Var<'bool'>>();
  for (let offset = 16; offset >= 1 << spread; offset >>= 1)
    upper.set(offset, local(`upper${offset}`, ne(and(lane, offset), 0)));

  b.for(name('round'), { start: 0, end: rounds }, (loop, round) => {
    const stepAt = loop.let(name('step_at'), add(firstAt, mul(round, perRound)));
    // Two buffers of the step's p a warp, by round parity: a step's stores never meet the reads of
    // the step before, which the barrier between them has ended.
    const probBase = loop.let(name('prob_base'), mul(add(shl(warp, 1), and(round, 1)), scores));
    const rows = positions.map((p) =>
      loop.let(
        name(`row${p}`),
        add(mul(min(p === 0 ? stepAt : add(stepAt, p), lastRow), rowWords), headBase),
      ),
    );
    // The lane's 4 dims of 128 at position p: one 8-byte (f16) or 16-byte (f32) load, by column.
    const load = (block: SdpaBuilder, memory: 'k' | 'v', p: number, word: Var<'u32'>, suffix = ''): Var[][] => {
      const label = name(`${memory}w${p}${suffix}`);
      const count = cache === 'f16' ? 2 : 4;
      const words = block.loadVector(memory, add(rows[p]!, word), Array.from({ length: count }, (_, i) => `${label}_${i}`));
      return COLUMNS.map((c) => words.slice((c * count) / 2, ((c + 1) * count) / 2));
    }; // prettier-ignore
    // Every K and V word of the step in flight before the first is used.
    const keys = positions.map((p) => load(loop, 'k', p, keyWord));
    const values = positions.map((p) => load(loop, 'v', p, valueWord));
    // The lane's part of q_h · K[t] over the columns, added to `into` (or from the first product).
    const dot = (block: SdpaBuilder, words: readonly (readonly (readonly Var[])[])[], from: number, into?: readonly Var<'f32'>[]): Var<'f32'>[] => {
      const suffix = from === 0 ? '' : '_far';
      const loaded = from === 0 ? nearQuery : queryOf(block, from, suffix);
      if (from !== 0) scaleQuery(block, loaded);
      const query = loaded.map((column) => column.map(({ values }) => values));
      return positions.flatMap((p) => {
        // Dim e of column k: half e of an f16 word, or f32 word e.
        const dims = words[p]!.flatMap((column, k) =>
          column.flatMap((word, w) => wordValues(block, cache, word, name(`key${p}_${k}_${w}${suffix}`)).map((key, half) => ({ key, k, e: w + half }))),
        );
        return heads.map((h) => {
          const terms = dims.map(({ key, k, e }) => ({ key, query: query[k]![h]![e]! }));
          const total = into?.[p * n + h];
          const first = terms[0]!;
          const sum = terms.slice(1).reduce<Expr<'f32'>>((partial, term) => fma(term.query, term.key, partial), total === undefined ? mul(first.query, first.key) : fma(first.query, first.key, total));
          if (total === undefined) return block.let(name(`s${p}_${h}${suffix}`), sum);
          block.assign(total, sum);
          return total;
        });
      });
    }; // prettier-ignore
    loop.if(eq(round, 0), (first) => scaleQuery(first, nearQuery));
    const score = reduceScatter(loop, dot(loop, keys, 0), { upper, spread, name });
    // K's dims 128-255 of a wide head (uniform: head_dim is a param), after the first dots are
    // summed: their own reduce-scatter (it is linear) added to the score.
    loop.if(wide, (far) => {
      const farWord = far.let(name('far_word'), laneWord(range, u32(SDPA_PASS_DIMS)));
      const farScores = dot(far, positions.map((p) => load(far, 'k', p, farWord, '_far')), SDPA_PASS_DIMS);
      const farName = (base: string): string => name(`${base}_far`);
      far.assign(score, add(score, reduceScatter(far, farScores, { upper, spread, name: farName })));
    }); // prettier-ignore
    const visible = loop.let(name('visible'), lt(add(stepAt, lanePosition), end));
    const masked = loop.let(name('masked'), select(visible, score, SDPA_NO_SCORE));
    // The step's max of each head: over the lanes of the head's positions, then one lane a head.
    const stepMax = loop.let(name('step_max'), masked);
    for (let offset = 16; offset >= 1 << (spread + headBits); offset >>= 1)
      loop.assign(stepMax, max(stepMax, loop.shuffle('xor', name(`step_max_xor${offset}`), stepMax, offset))); // prettier-ignore
    const newMax = heads.map((h) => {
      const headMax = loop.shuffle('idx', name(`head_max${h}`), stepMax, h << spread);
      return loop.let(name(`new_max${h}`), max(state.m[h]!, headMax));
    });
    const mine = newMax.slice(1).reduce<Expr<'f32'>>((picked, value, k) => select(eq(laneHead, k + 1), value, picked), newMax[0]!); // prettier-ignore
    const prob = loop.let(name('p'), select(visible, exp2(sub(masked, mine)), 0));
    heads.forEach((h) => {
      const alpha = loop.let(name(`alpha${h}`), exp2(sub(state.m[h]!, newMax[h]!)));
      const share = n === 1 ? canonical : and(canonical, eq(laneHead, h));
      loop.assign(state.l[h]!, fma(state.l[h]!, alpha, select(share, prob, 0)));
      loop.assign(state.m[h]!, newMax[h]!);
      for (const column of state.acc[h]!) for (const value of column) loop.assign(value, mul(value, alpha)); // prettier-ignore
    });
    loop.if(canonical, (store) => store.store('probs', add(probBase, shr(lane, spread)), prob));
    loop.barrier();
    // acc_h += p_h(t) · V[t]: the heads' p of a position in one broadcast (two at 8 heads).
    positions.forEach((p) => {
      const probs = loadHeads(loop, 'probs', add(probBase, p * n), heads.map((h) => name(`pv${p}_${h}`))); // prettier-ignore
      values[p]!.forEach((column, c) => {
        const dims = column.flatMap((word, w) => wordValues(loop, cache, word, name(`val${p}_${c}_${w}`))); // prettier-ignore
        probs.forEach((pv, h) =>
          dims.forEach((value, e) => {
            const target = state.acc[h]![c]![e]!;
            loop.assign(target, fma(pv, value, target));
          }),
        );
      });
    });
  });
}

/**
 * The lane's first word of the 128 dims from `from` in a head row: dims 4·lane.. of them, wrapped
 * into the head (the head's words are a multiple of 16 f16 or 32 f32 words, so the load stays
 * aligned): q is zero past head_dim, so a wrapped K word adds nothing, a wrapped V word lands in
 * dims nobody stores, and a warp's request still reads whole sectors of the row.
 */
function laneWord(range: SdpaRange, from: Expr<'u32'>): Expr<'u32'> {
  const { cache, lane, headWords } = range;
  const dims = add(from, shl(lane, 2));
  return rem(cache === 'f16' ? shr(dims, 1) : dims, headWords);
}

/**
 * Sums each of the step's scores over the 32 lanes and leaves score lane >> spread in that lane:
 * each xor stage a lane keeps half its values (the upper half where its mask bit is set) and adds
 * its partner's copy of them, then butterflies over the low `spread` bits give the copies the total.
 */
function reduceScatter(
  b: SdpaBuilder,
  values: readonly Var<'f32'>[],
  at: {
    readonly upper: ReadonlyMap<number, Var<'bool'>>;
    readonly spread: number;
    readonly name: (base: string) => string;
  },
): Var<'f32'> {
  const { upper, spread, name } = at;
  let kept: Expr<'f32'>[] = [...values];
  for (let offset = 16; kept.length > 1; offset >>= 1) {
    const half = kept.length / 2;
    const high = upper.get(offset)!;
    kept = Array.from({ length: half }, (_, j) => {
      const [low, top] = [kept[j]!, kept[j + half]!];
      const other = b.shuffle('xor', name(`scatter${offset}_${j}`), select(high, low, top), offset);
      return b.let(name(`kept${offset}_${j}`), add(select(high, top, low), other));
    });
  }
  const total = b.let(name('score'), kept[0]!);
  for (let offset = (1 << spread) >> 1; offset >= 1; offset >>= 1)
    b.assign(total, add(total, b.shuffle('xor', name(`score_xor${offset}`), total, offset)));
  return total;
}

/** The values of a cached word held in a local (unpacked halves for f16). */
function wordValues(b: SdpaBuilder, cache: SdpaCache, word: Var, label: string): Var<'f32'>[] {
  if (cache === 'f32') return [word as Var<'f32'>];
  return [0, 1].map((half) =>
    b.let(`${label}_${half}`, unpackHalf(word as Expr<'u32'>, half as 0 | 1)),
  );
}
