// The body of decode attention: a workgroup's pass over a range of cached positions.
import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import type { BodyBuilder, Declared } from '../builder.js';
import {
  add,
  and,
  div,
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
  unpackHalf,
  xor,
} from '../expressions.js';
import { four } from './locals.js';
import {
  ALL_HEADS,
  forHead,
  headsKnob,
  ladderHeads,
  loadHeads,
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

/** Positions a warp takes a tile: one a lane for the scores. */
export const SDPA_TILE = WARP_SIZE;
/** Words of a position's row a chunk stages (64 halves or 32 f32), one 128-byte line. */
export const SDPA_CHUNK_WORDS = 32;
/** Staged K words a warp holds: a chunk of its tile's 32 positions. */
export const SDPA_STAGE_WORDS = SDPA_TILE * SDPA_CHUNK_WORDS;
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
  const { rounds } = b.let({ rounds: div(add(tiles, sub(warps, 1)), warps) });
  const { laneRow, lanePiece, swizzle, stageBase, probBase } = b.let({
    laneRow: shr(lane, 3),
    lanePiece: and(lane, 7),
    // Lane p reads row p: rotating its 16-byte pieces by p mod 8 keeps 8 lanes on 32 banks.
    swizzle: shl(and(lane, 7), 2),
    stageBase: mul(warp, SDPA_STAGE_WORDS),
    probBase: mul(warp, mul(headsKnob(b), SDPA_TILE)),
  });
  b.for('round', { start: 0, end: rounds }, (loop, round) => {
    const { tileStart } = loop.let({
      tileStart: add(start, shl(add(mul(round, warps), warp), 5)),
    });
    const { live, position } = loop.let({
      live: lt(tileStart, end),
      position: add(tileStart, lane),
    });
    const { visible } = loop.let({ visible: lt(position, end) });
    const scores = ALL_HEADS.map((h) => loop.let(`s${h}`, 0, 'f32'));
    loop.for('chunk', { start: 0, end: chunks }, (inner, chunk) => {
      stageChunk(inner, range, { tileStart, live, chunk, laneRow, lanePiece, stageBase });
      inner.if(live, (compute) =>
        dotChunk(compute, cache, { chunk, scores, stageBase, lane, swizzle }),
      );
      inner.barrier();
    });
    foldTile(loop, { visible, scores, state, probBase, lane });
    loop.barrier();
    loop.if(live, (compute) => addValues(compute, range, { tileStart, probBase, state }));
  });
}

interface StageAt {
  readonly tileStart: Var<'u32'>;
  readonly live: Var<'bool'>;
  readonly chunk: Var<'u32'>;
  readonly laneRow: Var<'u32'>;
  readonly lanePiece: Var<'u32'>;
  readonly stageBase: Var<'u32'>;
}

/**
 * Copies chunk `chunk` of the tile's K rows into the warp's stage: 8 loads of 16 bytes a lane, 4
 * positions of 128 contiguous bytes each a load (whole sectors). Slots of positions past the end
 * or words past the head get zeros, so the dots never meet stale or poisoned words.
 */
function stageChunk(b: SdpaBuilder, range: SdpaRange, at: StageAt): void {
  const { headWords, rowWords, headBase, end } = range;
  const { tileStart, live, chunk, laneRow, lanePiece, stageBase } = at;
  b.if(live, (copy) => {
    const { pieceWord } = copy.let({
      pieceWord: add(shl(chunk, 5), shl(lanePiece, 2)),
    });
    const { pieceLive, source } = copy.let({
      pieceLive: lt(pieceWord, headWords),
      source: add(add(mul(add(tileStart, laneRow), rowWords), headBase), pieceWord),
    });
    // Load k copies positions 4k + laneRow; p mod 8 = 4(k mod 2) + laneRow.
    copy.for('stage_load', { start: 0, end: SDPA_TILE / 4 }, (loop, k) => {
      const { stageRow } = loop.let({ stageRow: add(shl(k, 2), laneRow) });
      const { slot, inRange } = loop.let({
        slot: add(
          add(stageBase, shl(stageRow, 5)),
          xor(shl(lanePiece, 2), shl(and(stageRow, 7), 2)),
        ),
        inRange: and(pieceLive, lt(add(tileStart, stageRow), end)),
      });
      loop.if(
        inRange,
        (load) => {
          const words = load.loadVector(
            'k',
            add(source, mul(rowWords, shl(k, 2))),
            [0, 1, 2, 3].map((i) => `kw${i}`),
          );
          load.storeVector(
            'k_stage',
            slot,
            four((i) => words[i]!),
          );
        },
        (zero) => zero.storeVector('k_stage', slot, [0, 0, 0, 0]),
      );
    });
  });
  b.barrier();
}

interface DotAt {
  readonly chunk: Var<'u32'>;
  readonly scores: readonly Var<'f32'>[];
  readonly stageBase: Var<'u32'>;
  readonly lane: Var<'u32'>;
  readonly swizzle: Var<'u32'>;
}

/** Adds the chunk's part of q_h · K[position] into each head's score, the lane's own position. */
function dotChunk(b: SdpaBuilder, cache: SdpaCache, at: DotAt): void {
  const { chunk, scores, stageBase, lane, swizzle } = at;
  const perWord = valuesPerWord(cache);
  const { rowSlot, qChunk } = b.let({
    rowSlot: add(stageBase, mul(lane, SDPA_CHUNK_WORDS)),
    qChunk: mul(chunk, SDPA_CHUNK_WORDS * perWord),
  });
  // A loop, not unrolled: the spec stays small, and the loop costs 3 of ~50 instructions a trip.
  b.for('piece', { start: 0, end: SDPA_CHUNK_WORDS, step: 4 }, (loop, piece) => {
    const words = loop.loadVector(
      'k_stage',
      add(rowSlot, xor(swizzle, piece)),
      [0, 1, 2, 3].map((i) => `ks${i}`),
    );
    const keys = words.flatMap((word, i) => wordValues(loop, cache, word, `key${i}`));
    const { qPiece } = loop.let({
      qPiece: add(qChunk, perWord === 1 ? piece : mul(piece, perWord)),
    });
    for (const h of ALL_HEADS) {
      forHead(loop, h, (head) => {
        for (let v = 0; v < keys.length; v += 4) {
          // One constant offset from qPiece, so PTX folds it into the load's address.
          const offset = h * SDPA_Q_STRIDE + v;
          const queries = head.loadVector(
            'q_scaled',
            offset === 0 ? qPiece : add(qPiece, offset),
            [0, 1, 2, 3].map((i) => `q${h}_${v + i}`),
          );
          queries.forEach((query, i) => {
            const key = keys[v + i];
            const score = scores[h];
            if (key !== undefined && score !== undefined)
              head.assign(score, fma(query, key, score));
          });
        }
      });
    }
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
  const probs: Var<'f32'>[] = [];
  ladderHeads(
    b,
    (head, h) => {
      const { m, l, acc, score } = {
        m: state.m[h]!,
        l: state.l[h]!,
        acc: state.acc[h]!,
        score: scores[h]!,
      };
      const masked = head.let(`masked${h}`, select(visible, score, SDPA_NO_SCORE));
      const tileMax = head.reduce('max', `tile_max${h}`, masked);
      const { newMax } = { newMax: head.let(`new_max${h}`, max(m, tileMax)) };
      const alpha = head.let(`alpha${h}`, exp2(sub(m, newMax)));
      const prob = head.let(`p${h}`, select(visible, exp2(sub(masked, newMax)), 0));
      head.assign(l, fma(l, alpha, prob));
      head.assign(m, newMax);
      for (const values of acc) for (const value of values) head.assign(value, mul(value, alpha));
      probs.push(prob);
    },
    (done, n) => storeHeads(done, 'probs', add(probBase, mul(lane, n)), probs.slice(0, n)),
  );
}

/** The lane's two V values of column c: one f16 word unpacked, or two f32 words in one load. */
function columnValues(
  b: SdpaBuilder,
  cache: SdpaCache,
  vRow: Var<'u32'>,
  c: number,
  tag: string,
): Var<'f32'>[] {
  const wordsPerColumn = (SDPA_LANE_DIMS * WARP_SIZE) / valuesPerWord(cache);
  const at = c === 0 ? vRow : add(vRow, c * wordsPerColumn);
  const name = `val${c}${tag}`;
  if (cache === 'f32') return b.loadVector('v', at, [`${name}_0`, `${name}_1`]) as Var<'f32'>[];
  // A local first, so that both halves come from one load.
  return wordValues(b, cache, b.let(`v_word${c}${tag}`, b.load('v', at)), name);
}

interface AddAt {
  readonly tileStart: Var<'u32'>;
  readonly probBase: Var<'u32'>;
  readonly state: SdpaState;
}

/** acc_h += p_h(t) · V[t] over the tile's visible positions, dims 64c + 2·lane + e a lane. */
function addValues(b: SdpaBuilder, range: SdpaRange, at: AddAt): void {
  const { cache, lane, rowWords, headBase, end } = range;
  const { tileStart, probBase, state } = at;
  const heads = headsKnob(b);
  // The loop walks the tile's probs rows; V's row advances by rowWords a position.
  const { probEnd, vRow } = b.let({
    probEnd: add(probBase, mul(sub(min(add(tileStart, SDPA_TILE), end), tileStart), heads)),
    // The lane's first word: its dim pair is one f16 word, or two f32 words.
    vRow: add(add(mul(tileStart, rowWords), headBase), cache === 'f16' ? lane : shl(lane, 1)),
  });
  b.for('prob_at', { start: probBase, end: probEnd, step: heads }, (loop, probAt) => {
    // The heads' p in one broadcast (two at 8 heads), then each V word once for all of them.
    switchHeads(loop, (block, n, tag) => {
      const names = ALL_HEADS.slice(0, n).map((h) => `pv${h}${tag}`);
      const probs = loadHeads(block, 'probs', probAt, names);
      forLaneColumns(block, range, (inside, c) => {
        const values = columnValues(inside, cache, vRow, c, tag);
        probs.forEach((prob, h) =>
          values.forEach((value, e) => {
            const target = state.acc[h]?.[c]?.[e];
            if (target !== undefined) inside.assign(target, fma(prob, value, target));
          }),
        );
      });
    });
    loop.assign(vRow, add(vRow, rowWords));
  });
}
