// The body of decode attention: a workgroup's pass over a range of cached positions.
import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
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
  select,
  shl,
  shr,
  sub,
  u32,
  unpackHalf,
  xor,
} from '../expressions.js';
import {
  ALL_HEADS,
  headsKnob,
  ladderHeads,
  loadHeads,
  headsTag,
  reduceHeads,
  storeHeads,
  switchHeads,
} from './sdpa-heads.js';
import type { SdpaCache } from './sdpa-shape.js';

export type SdpaBuilder = BodyBuilder<Declared>;

/** A u32 param (the builder types params loosely over both caches' declarations). */
export const u32Param = (b: SdpaBuilder, name: string): Expr<'u32'> => b.param(name) as Expr<'u32'>;

/** Whether a sliding window hides some of the n_kv positions (window 0 = none). */
export const windowCuts = (nKv: Expr<'u32'>, window: Expr<'u32'>): Expr<'bool'> =>
  and(gt(window, 0), gt(nKv, window));

import {
  SDPA_CHUNK_WORDS,
  SDPA_STAGE_WORDS,
  SDPA_TILE,
  loadChunk,
  storeChunk,
} from './sdpa-stage.js';

export { SDPA_CHUNK_WORDS, SDPA_STAGE_WORDS, SDPA_TILE } from './sdpa-stage.js';
/** q's row stride in shared memory: the largest head_dim. */
export const SDPA_Q_STRIDE = 256;
/**
 * The running max before any position: finite, so masked lanes give exp2(sentinel − m) = 0 and a
 * warp that saw nothing rescales by exp2(0) = 1 instead of exp2(−inf + inf) = NaN.
 */
export const SDPA_NO_SCORE = -3e38;

/** Per query head of the pass: running max m, this lane's share of the sum l, and its dims of acc. */
export interface SdpaState {
  readonly m: readonly Var<'f32'>[];
  readonly l: readonly Var<'f32'>[];
  /** acc[h][c][e]: head h, dim 64c + 2·lane + e (column c of the output). */
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
  /** Dim pairs of a head: head_dim / 2; lane l owns pairs l + 32c in p·V and the fold. */
  readonly pairs: Var<'u32'>;
  /** Staged chunks a position's head row takes: ceil(headWords / 32). */
  readonly chunks: Var<'u32'>;
  /** The positions [start, end) this workgroup attends to. */
  readonly start: Var<'u32'>;
  readonly end: Var<'u32'>;
}

/** Values a cached word holds: two halves, or one f32. */
export const valuesPerWord = (cache: SdpaCache): number => (cache === 'f16' ? 2 : 1);
/** Dims a lane owns of each 64-dim column of the output, and the columns of the largest head. */
export const SDPA_LANE_DIMS = 2;
export const SDPA_COLUMNS = SDPA_Q_STRIDE / (SDPA_LANE_DIMS * WARP_SIZE);

/** The values of a cached word held in a local (unpacked halves for f16). */
function wordValues(b: SdpaBuilder, cache: SdpaCache, word: Var, name: string): Var<'f32'>[] {
  if (cache === 'f32') return [word as Var<'f32'>];
  return [0, 1].map((half) =>
    b.let(`${name}_${half}`, unpackHalf(word as Expr<'u32'>, half as 0 | 1)),
  );
}

/**
 * For columns c = 0, 1, …: `body(c)` in the lanes whose dims 64c + 2·lane + {0, 1} exist,
 * nested so that a head's missing columns cost one test.
 */
export function forLaneColumns(
  b: SdpaBuilder,
  range: Pick<SdpaRange, 'lane' | 'pairs'>,
  body: (block: SdpaBuilder, c: number) => void,
  c = 0,
): void {
  if (c === SDPA_COLUMNS) return;
  const pair = c === 0 ? range.lane : add(range.lane, c * WARP_SIZE);
  b.if(lt(pair, range.pairs), (inside) => {
    body(inside, c);
    forLaneColumns(inside, range, body, c + 1);
  });
}

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
 * Attends the pass's query heads (q·scale·log2e in shared `q_scaled`) to positions [start, end):
 * the warps take interleaved tiles of 32 positions; per tile the warp stages K a chunk at a time,
 * each lane dots its position with the heads, the online softmax folds the tile in, and the lanes
 * (each owning dims 64c + 2·lane + {0, 1} of the head) add p·V. Every loop is workgroup-uniform: a warp
 * without a tile runs the barriers and the softmax (all lanes masked: alpha 1, p 0) only.
 */
export function attendRange(b: SdpaBuilder, range: SdpaRange, state: SdpaState): void {
  const { cache, lane, warp, warps, start, end, chunks } = range;
  const span = sub(end, start);
  const { tiles } = b.let({ tiles: shr(add(span, SDPA_TILE - 1), 5) });
  const { rounds, tileStep } = b.let({
    rounds: div(add(tiles, sub(warps, 1)), warps),
    tileStep: shl(warps, 5),
  });
  const { laneRow, lanePiece, swizzle, stageBase, probBase, firstTile } = b.let({
    laneRow: shr(lane, 3),
    lanePiece: and(lane, 7),
    // Lane p reads row p: rotating its 16-byte pieces by p mod 8 keeps 8 lanes on 32 banks.
    swizzle: shl(and(lane, 7), 2),
    stageBase: mul(warp, SDPA_STAGE_WORDS),
    probBase: mul(warp, mul(headsKnob(b), SDPA_TILE)),
    firstTile: add(start, shl(warp, 5)),
  });
  const lanes = { laneRow, lanePiece };
  // Each step's math runs with the next chunk's loads in flight (the next K chunk, V's first, the
  // next V chunk): a step issues them, does its math, waits at a barrier, then stores them.
  const step = (
    block: SdpaBuilder,
    next: {
      readonly memory: 'k' | 'v';
      readonly tileStart: Expr<'u32'>;
      readonly chunk: Expr<'u32'>;
    },
    prefix: string,
    math: (inside: SdpaBuilder) => void,
  ): void => {
    const loads = loadChunk(block, range, { ...lanes, ...next }, next.memory, prefix);
    math(block);
    block.barrier();
    storeChunk(block, range, loads, stageBase);
  };
  b.for('round', { start: 0, end: rounds }, (loop, round) => {
    const { tileStart } = loop.let({ tileStart: add(firstTile, mul(round, tileStep)) });
    const { live, position, lastChunk } = loop.let({
      live: lt(tileStart, end),
      position: add(tileStart, lane),
      lastChunk: sub(chunks, 1),
    });
    const { visible } = loop.let({ visible: lt(position, end) });
    const scores = ALL_HEADS.map((h) => loop.let(`s${h}`, 0, 'f32'));
    // The round's first chunk: its round trip is the one a round does not overlap.
    storeChunk(loop, range, loadChunk(loop, range, { ...lanes, tileStart, chunk: u32(0) }, 'k', 'k_first'), stageBase); // prettier-ignore
    const dot = (chunk: Var<'u32'>, site: string) => (inside: SdpaBuilder) =>
      inside.if(live, (compute) => dotChunk(compute, cache, { chunk, scores, stageBase, lane, swizzle, site })); // prettier-ignore
    const addV = (chunk: Var<'u32'>) => (inside: SdpaBuilder) =>
      inside.if(live, (compute) => addChunk(compute, range, { state, chunk, tileStart, stageBase, probBase })); // prettier-ignore
    loop.for('chunk', { start: 0, end: lastChunk }, (inner, chunk) =>
      step(inner, { memory: 'k', tileStart, chunk: add(chunk, 1) }, 'k_next', dot(chunk, '')),
    );
    step(loop, { memory: 'v', tileStart, chunk: u32(0) }, 'v_first', (inside) => {
      dot(lastChunk, '_last')(inside);
      foldTile(inside, { visible, scores, state, probBase, lane });
    });
    // The last V step loads its own chunk again (the next is K, another buffer): one copy of the
    // p·V code, the largest part of the kernel, where a last step of its own would need two.
    loop.for(
      'v_chunk',
      { start: 0, end: chunks },
      (inner, chunk) =>
      step(inner, { memory: 'v', tileStart, chunk: min(add(chunk, 1), lastChunk) }, 'v_next', addV(chunk)), // prettier-ignore
    );
  });
}

interface AddChunkAt {
  readonly state: SdpaState;
  readonly chunk: Var<'u32'>;
  readonly tileStart: Var<'u32'>;
  readonly stageBase: Var<'u32'>;
  readonly probBase: Var<'u32'>;
}

/** p·V of the staged V chunk into the column its dims are in (code per column: registers). */
function addChunk(b: SdpaBuilder, range: SdpaRange, at: AddChunkAt): void {
  const { cache, lane, end } = range;
  const { chunk, tileStart, stageBase, probBase, state } = at;
  const perColumn = SDPA_LANE_DIMS / valuesPerWord(cache);
  const pv = b.let({
    column: perColumn === 1 ? chunk : shr(chunk, 1),
    count: sub(min(add(tileStart, SDPA_TILE), end), tileStart),
    // The lane's word of position 0's staged row; rows follow every 32 words.
    laneSlot: add(stageBase, cache === 'f16' ? lane : and(shl(lane, 1), SDPA_CHUNK_WORDS - 1)),
    probAt: probBase,
  });
  for (let c = 0; c < SDPA_COLUMNS; c++)
    b.if(eq(pv.column, c), (block) => addValues(block, range, { ...pv, state, chunk, c }));
}

interface DotAt {
  readonly chunk: Var<'u32'>;
  readonly scores: readonly Var<'f32'>[];
  readonly stageBase: Var<'u32'>;
  readonly lane: Var<'u32'>;
  readonly swizzle: Var<'u32'>;
  /** Suffixes the locals of a second call site. */
  readonly site: string;
}

/** Adds the chunk's part of q_h · K[position] into each head's score, the lane's own position. */
function dotChunk(b: SdpaBuilder, cache: SdpaCache, at: DotAt): void {
  const { chunk, scores, stageBase, lane, swizzle, site } = at;
  const perWord = valuesPerWord(cache);
  const rowSlot = b.let(`row_slot${site}`, add(stageBase, mul(lane, SDPA_CHUNK_WORDS)));
  const qChunk = b.let(`q_chunk${site}`, mul(chunk, SDPA_CHUNK_WORDS * perWord));
  // A loop, not unrolled: the spec stays small, and the loop costs 3 of ~50 instructions a trip.
  b.for(`piece${site}`, { start: 0, end: SDPA_CHUNK_WORDS, step: 4 }, (loop, piece) => {
    const words = loop.loadVector(
      'k_stage',
      add(rowSlot, xor(swizzle, piece)),
      [0, 1, 2, 3].map((i) => `ks${i}${site}`),
    );
    const qPiece = loop.let(
      `q_piece${site}`,
      add(qChunk, perWord === 1 ? piece : mul(piece, perWord)),
    );
    const values = 4 * perWord;
    const queries: Var<'f32'>[][] = [];
    // Every head's q loads first, then the FMAs key by key across the heads: independent chains.
    ladderHeads(
      loop,
      (head, h) => {
        const loaded: Var<'f32'>[] = [];
        for (let v = 0; v < values; v += 4) {
          // One constant offset from qPiece, so PTX folds it into the load's address.
          const offset = h * SDPA_Q_STRIDE + v;
          const names = [0, 1, 2, 3].map((i) => `q${h}_${v + i}${site}`);
          loaded.push(
            ...(head.loadVector(
              'q_scaled',
              offset === 0 ? qPiece : add(qPiece, offset),
              names,
            ) as Var<'f32'>[]),
          );
        }
        queries[h] = loaded;
      },
      (block, n) => {
        const tag = headsTag(n);
        const keys = words.flatMap((word, i) =>
          wordValues(block, cache, word, `key${i}${tag}${site}`),
        );
        keys.forEach((key, v) =>
          ALL_HEADS.slice(0, n).forEach((h) => {
            const query = queries[h]?.[v];
            const score = scores[h];
            if (query !== undefined && score !== undefined)
              block.assign(score, fma(query, key, score));
          }),
        );
      },
    );
  });
}

interface FoldAt {
  readonly visible: Var<'bool'>;
  readonly scores: readonly Var<'f32'>[];
  readonly state: SdpaState;
  readonly probBase: Var<'u32'>;
  readonly lane: Var<'u32'>;
}

/**
 * The online softmax over the tile (scores already in log2 units): new max, rescale of the sum and
 * accumulators, and each lane's p = exp2(s − m) (0 when masked) to the warp's `probs` row.
 */
function foldTile(b: SdpaBuilder, at: FoldAt): void {
  const { visible, scores, state, probBase, lane } = at;
  const masked: Var<'f32'>[] = [];
  ladderHeads(
    b,
    (head, h) =>
      void masked.push(head.let(`masked${h}`, select(visible, scores[h]!, SDPA_NO_SCORE))),
    (done, n) => {
      const tag = headsTag(n);
      const heads = ALL_HEADS.slice(0, n);
      const tileMax = reduceHeads(
        done,
        'max',
        heads.map((h) => `tile_max${h}${tag}`),
        masked.slice(0, n),
      );
      const probs = heads.map((h) => {
        const { m, l, acc } = { m: state.m[h]!, l: state.l[h]!, acc: state.acc[h]! };
        const newMax = done.let(`new_max${h}${tag}`, max(m, tileMax[h]!));
        const alpha = done.let(`alpha${h}${tag}`, exp2(sub(m, newMax)));
        const prob = done.let(`p${h}${tag}`, select(visible, exp2(sub(masked[h]!, newMax)), 0));
        done.assign(l, fma(l, alpha, prob));
        done.assign(m, newMax);
        for (const values of acc) for (const value of values) done.assign(value, mul(value, alpha));
        return prob;
      });
      storeHeads(done, 'probs', add(probBase, mul(lane, n)), probs);
    },
  );
}

interface AddAt {
  readonly state: SdpaState;
  readonly chunk: Var<'u32'>;
  /** Visible positions of the tile, and the running slots of the lane's V word and the heads' p. */
  readonly count: Var<'u32'>;
  readonly laneSlot: Var<'u32'>;
  readonly probAt: Var<'u32'>;
  /** The output column the chunk's dims are in. */
  readonly c: number;
}

/**
 * acc_h[c] += p_h(t) · V[t] over the tile's visible positions, from the staged chunk: f16 lane l
 * owns word l (dims 2l, 2l + 1 of the column); f32 lanes 0–15 own words 2l, 2l + 1 of an even
 * chunk and lanes 16–31 of an odd one (a column is two f32 chunks).
 */
function addValues(b: SdpaBuilder, range: SdpaRange, at: AddAt): void {
  const { cache, lane } = range;
  const { chunk, count, laneSlot, probAt, state, c } = at;
  const heads = headsKnob(b);
  const mine = cache === 'f16' ? undefined : eq(shr(lane, 4), and(chunk, 1));
  const suffix = c === 0 ? '' : `_c${c}`;
  // PV_UNROLL positions a trip, their loads first: staged rows and p past `count` are zeros, so
  // the last trip may run past it.
  b.for(`pv_at${suffix}`, { start: 0, end: count, step: PV_UNROLL }, (loop) => {
    const tag = (variant: string, k: number): string => `${variant}${suffix}_${k}`;
    // The heads' p in one broadcast (two at 8 heads), then the staged V word once for all of them.
    switchHeads(loop, (block, n, variant) => {
      const positions = Array.from({ length: PV_UNROLL }, (_, k) => {
        const names = ALL_HEADS.slice(0, n).map((h) => `pv${h}${tag(variant, k)}`);
        const probs = loadHeads(
          block,
          'probs',
          k === 0 ? probAt : add(probAt, mul(heads, k)),
          names,
        );
        const slot = k === 0 ? laneSlot : add(laneSlot, k * SDPA_CHUNK_WORDS);
        // An f16 word unpacks after every load is issued; f32 values are used as loaded.
        const values: Var[] =
          cache === 'f16'
            ? [block.let(`v_word${tag(variant, k)}`, block.load('k_stage', slot))]
            : block.loadVector('k_stage', slot, [
                `val${tag(variant, k)}_0`,
                `val${tag(variant, k)}_1`,
              ]);
        return { probs, values, k };
      });
      const accumulate = (inside: SdpaBuilder): void =>
        positions.forEach(({ probs, values, k }) => {
          const unpacked = values.flatMap((value) =>
            wordValues(inside, cache, value, `val${tag(variant, k)}`),
          );
          probs.forEach((prob, h) =>
            unpacked.forEach((value, e) => {
              const target = state.acc[h]?.[c]?.[e];
              if (target !== undefined) inside.assign(target, fma(prob, value, target));
            }),
          );
        });
      if (mine === undefined) accumulate(block);
      else block.if(mine, accumulate);
    });
    loop.assign(laneSlot, add(laneSlot, PV_UNROLL * SDPA_CHUNK_WORDS));
    loop.assign(probAt, add(probAt, mul(heads, PV_UNROLL)));
  });
}

/** Positions of the tile a p·V trip adds: their loads in flight together. */
const PV_UNROLL = 4;
