// Moves one chunk of a tile's K or V rows into a warp's shared stage in two halves: the loads, issued
// a step ahead, and the stores, after the step's math, so a chunk's DRAM round trip overlaps it.
import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, and, le, lt, min, mul, or, select, shl, sub, xor } from '../expressions.js';
import { four } from './locals.js';
import type { SdpaBuilder, SdpaRange } from './sdpa-attend.js';

/** Positions a warp takes a tile: one a lane for the scores. */
export const SDPA_TILE = WARP_SIZE;
/** Words of a position's row a chunk stages (64 halves or 32 f32), one 128-byte line. */
export const SDPA_CHUNK_WORDS = 32;
/** Staged words a warp holds: a chunk of its tile's 32 positions. */
export const SDPA_STAGE_WORDS = SDPA_TILE * SDPA_CHUNK_WORDS;
/** 16-byte loads a lane makes a chunk: 4 positions a warp load. */
const LOADS = SDPA_TILE / 4;

/** Which chunk of which tile, and the lane's part of the copy. */
export interface ChunkAt {
  readonly tileStart: Expr<'u32'>;
  readonly chunk: Expr<'u32'>;
  readonly laneRow: Var<'u32'>;
  readonly lanePiece: Var<'u32'>;
}

/** A chunk's words in flight: the lane's 8 loads of 4 words, and where they came from. */
export interface ChunkLoads {
  readonly memory: 'k' | 'v';
  readonly prefix: string;
  readonly at: ChunkAt;
  readonly pieceLive: Var<'bool'>;
  readonly words: readonly (readonly Var[])[];
}

/**
 * Issues the 8 loads of 16 bytes a lane makes for chunk `at.chunk` of the tile's rows of `memory`:
 * 4 positions of 128 contiguous bytes a load (whole sectors). Rows past the range read the last
 * visible row and pieces past the head the head's first (always in bounds, never used: the stores
 * write zeros there), so the loads need no branch and stay in flight across the step's math.
 * `prefix` keeps the locals of each call site apart.
 */
export function loadChunk(
  b: SdpaBuilder,
  range: SdpaRange,
  at: ChunkAt,
  memory: 'k' | 'v',
  prefix: string,
): ChunkLoads {
  const { headWords, rowWords, headBase, end } = range;
  const name = (base: string): string => `${prefix}_${base}`;
  const pieceWord = b.let(name('piece_word'), add(shl(at.chunk, 5), shl(at.lanePiece, 2)));
  const pieceLive = b.let(name('piece_live'), lt(pieceWord, headWords));
  const column = b.let(name('column'), add(headBase, select(pieceLive, pieceWord, 0)));
  const firstRow = b.let(name('first_row'), add(at.tileStart, at.laneRow));
  const lastRow = sub(end, 1);
  const words = Array.from({ length: LOADS }, (_, k) => {
    const row = k === 0 ? firstRow : add(firstRow, 4 * k);
    const source = add(mul(min(row, lastRow), rowWords), column);
    return b.loadVector(
      memory,
      source,
      four((i) => name(`w${k}_${i}`)),
    );
  });
  return { memory, prefix, at, pieceLive, words };
}

/**
 * Stores a chunk's loaded words at the rows of the warp's stage (zeros past the range or the head):
 * position p's row; K's 16-byte pieces rotate by p mod 8, as lane p reads row p in the dots (V's
 * rows are read whole, by every lane at once, so they need no rotation). Ends with a barrier.
 */
export function storeChunk(
  b: SdpaBuilder,
  range: SdpaRange,
  loads: ChunkLoads,
  stageBase: Var<'u32'>,
): void {
  const { memory, prefix, at, pieceLive, words } = loads;
  const { laneRow, lanePiece } = at;
  // Load k's row 4k + laneRow has p mod 8 = laneRow | 4(k mod 2).
  const rowBase = add(stageBase, shl(laneRow, 5));
  const rotations = memory === 'k' ? [0, 4] : [0];
  const slots = rotations.map((odd, k) =>
    b.let(
      `${prefix}_slot${k}`,
      add(
        k === 0 ? rowBase : add(rowBase, SDPA_TILE * 4),
        shl(memory === 'k' ? xor(lanePiece, or(laneRow, odd)) : lanePiece, 2),
      ),
    ),
  );
  const store = (block: SdpaBuilder, kept: (loaded: readonly Var[], k: number) => Expr[]): void =>
    words.forEach((loaded, k) => {
      const slot = slots[k % slots.length]!;
      const offset = (k - (k % slots.length)) * SDPA_TILE * 4;
      const values = kept(loaded, k) as [Expr, Expr, Expr, Expr];
      block.storeVector('k_stage', offset === 0 ? slot : add(slot, offset), values);
    });
  // A whole tile and chunk stores its words as loaded; otherwise zeros past the range or the head.
  const full = and(le(add(at.tileStart, SDPA_TILE), range.end), le(add(shl(at.chunk, 5), SDPA_CHUNK_WORDS), range.headWords)); // prettier-ignore
  b.if(
    full,
    (fast) => store(fast, (loaded) => [...loaded]),
    (slow) => {
      const firstRow = slow.let(`${prefix}_row`, add(at.tileStart, laneRow));
      store(slow, (loaded, k) => {
        const live = slow.let(
          `${prefix}_live${k}`,
          and(pieceLive, lt(k === 0 ? firstRow : add(firstRow, 4 * k), range.end)),
        );
        return loaded.map((word) => select(live, word as Expr, 0));
      });
    },
  );
  b.barrier();
}
