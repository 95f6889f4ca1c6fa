// Copies one chunk of a tile's K or V rows into a warp's shared stage, loads before stores.
import { WARP_SIZE, type VarExpr as Var } from '../body.js';
import { add, and, le, lt, mul, or, shl, xor } from '../expressions.js';
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

/** Where the warp's tile and chunk are, and the lane's part of the copy. */
export interface StageAt {
  readonly tileStart: Var<'u32'>;
  readonly live: Var<'bool'>;
  readonly chunk: Var<'u32'>;
  readonly laneRow: Var<'u32'>;
  readonly lanePiece: Var<'u32'>;
  readonly stageBase: Var<'u32'>;
}

/**
 * Copies chunk `chunk` of the tile's rows of `memory` (K or V) into the warp's stage: 8 loads of
 * 16 bytes a lane, 4 positions of 128 contiguous bytes each a load (whole sectors), stored at
 * position p's row; K's 16-byte pieces rotate by p mod 8, as lane p reads row p in the dots (V's
 * rows are read whole, by every lane at once, so they need no rotation).
 * A whole tile and chunk issues its 8 loads before any store, so they are in flight together;
 * otherwise slots past the end or past the head get zeros, never stale or poisoned words.
 */
export function stageChunk(b: SdpaBuilder, range: SdpaRange, at: StageAt, memory: 'k' | 'v'): void {
  const { headWords, rowWords, headBase, end } = range;
  const { tileStart, live, chunk, laneRow, lanePiece, stageBase } = at;
  const name = (base: string): string => `${memory}_${base}`;
  b.if(live, (copy) => {
    const pieceWord = copy.let(name('piece_word'), add(shl(chunk, 5), shl(lanePiece, 2)));
    const chunkEnd = add(shl(chunk, 5), SDPA_CHUNK_WORDS);
    const source = copy.let(
      name('source'),
      add(add(mul(add(tileStart, laneRow), rowWords), headBase), pieceWord),
    );
    const full = and(le(add(tileStart, SDPA_TILE), end), le(chunkEnd, headWords));
    copy.if(
      full,
      (fast) => {
        const rowStep = fast.let(name('row_step'), shl(rowWords, 2));
        const words = Array.from({ length: LOADS }, (_, k) =>
          fast.loadVector(
            memory,
            k === 0 ? source : add(source, mul(rowStep, k)),
            four((i) => name(`f${k}_${i}`)),
          ),
        );
        // Load k's row 4k + laneRow has p mod 8 = laneRow | 4(k mod 2).
        const rowBase = add(stageBase, shl(laneRow, 5));
        const rotations = memory === 'k' ? [0, 4] : [0];
        const slots = rotations.map((odd, k) =>
          fast.let(
            name(`slot${k}`),
            add(
              k === 0 ? rowBase : add(rowBase, SDPA_TILE * 4),
              shl(memory === 'k' ? xor(lanePiece, or(laneRow, odd)) : lanePiece, 2),
            ),
          ),
        );
        words.forEach((loaded, k) => {
          const slot = slots[k % slots.length]!;
          const offset = (k - (k % slots.length)) * SDPA_TILE * 4;
          fast.storeVector('k_stage', offset === 0 ? slot : add(slot, offset), [...loaded] as [
            Var,
            Var,
            Var,
            Var,
          ]);
        });
      },
      (slow) => guardedCopy(slow, range, at, memory, { pieceWord, source }),
    );
  });
  b.barrier();
}

/** The copy of a partial tile or chunk: each load under its own test, zeros in the other slots. */
function guardedCopy(
  b: SdpaBuilder,
  range: SdpaRange,
  at: StageAt,
  memory: 'k' | 'v',
  lane: { readonly pieceWord: Var<'u32'>; readonly source: Var<'u32'> },
): void {
  const { headWords, rowWords, end } = range;
  const { tileStart, laneRow, lanePiece, stageBase } = at;
  const name = (base: string): string => `${memory}_${base}`;
  const pieceLive = b.let(name('piece_live'), lt(lane.pieceWord, headWords));
  // Load k copies positions 4k + laneRow; p mod 8 = 4(k mod 2) + laneRow.
  b.for(name('stage_load'), { start: 0, end: LOADS }, (loop, k) => {
    const stageRow = loop.let(name('stage_row'), add(shl(k, 2), laneRow));
    const slot = loop.let(
      name('slot'),
      add(
        add(stageBase, shl(stageRow, 5)),
        memory === 'k' ? xor(shl(lanePiece, 2), shl(and(stageRow, 7), 2)) : shl(lanePiece, 2),
      ),
    );
    const inRange = loop.let(name('in_range'), and(pieceLive, lt(add(tileStart, stageRow), end)));
    loop.if(
      inRange,
      (load) => {
        const words = load.loadVector(
          memory,
          add(lane.source, mul(rowWords, shl(k, 2))),
          four((i) => name(`w${i}`)),
        );
        load.storeVector('k_stage', slot, [...words] as [Var, Var, Var, Var]);
      },
      (zero) => zero.storeVector('k_stage', slot, [0, 0, 0, 0]),
    );
  });
}
