// What both tensor-core mat-vec kernels (wmma-gemv, q4k-soa-wmma) do alike: guarded word loads, and
// the end of a 16-row tile, where each warp holds D fragments for its share of K and warp 0 sums
// them and stores Y.
import { WARP_SIZE } from '../body.js';
import type { BodyBuilder } from '../builder.js';
import type { Local, Value } from '../expression-methods.js';
import { f32, u32 } from '../expressions.js';
import { assignEach, four, vectorNames } from './locals.js';
import type { Four, Pair } from './tuples.js';

/** f32 a lane parks in shared memory for the cross-warp sum: both n8 tiles' D fragments. */
const PARTIAL_WORDS = 8;
/** Words of a warp's parked acc[0] (a lane's 4 side by side), before its acc[1]. */
const HALF_WORDS = (WARP_SIZE * PARTIAL_WORDS) / 2;

/** The shared array the cross-warp sum needs, for a kernel's `shared` declarations. */
export const WMMA_PARTIAL = {
  name: 'partial',
  element: 'f32',
  length: `warps * ${WARP_SIZE * PARTIAL_WORDS}`,
} as const;

/** The declarations both kernels share: W, X (u32 words), Y and `partial` (f32), three sizes. */
type TileBuilder = BodyBuilder<{
  readonly memory: {
    readonly w: 'u32';
    readonly x: 'u32';
    readonly y: 'f32';
    readonly partial: 'f32';
  };
  readonly params: { readonly n_cols: 'u32'; readonly n_out: 'u32'; readonly n_in: 'u32' };
}>;

/** A lane's D fragments of the tile's two n8 column tiles: columns 0-7, then 8-15. */
export type Accumulators = Pair<Four<Local<'f32'>>>;

/** The tile's accumulators, zero. */
export const zeroAccumulators = (b: TileBuilder): Accumulators => [
  four(() => b.let('acc', f32(0))),
  four(() => b.let('acc', f32(0))),
];

/**
 * 4 words of `memory` at `index` in one 16-byte load; with `live`, zeros replaced by the load only
 * where it holds.
 */
export function loadWords(
  b: TileBuilder,
  memory: 'w' | 'x',
  index: Value<'u32'>,
  live?: Value<'bool'>,
): Four<Local<'u32'>> {
  const names = vectorNames(memory);
  if (live === undefined) return b.loadVector(memory, index, names);
  const words = four((k) => b.let(names[k], u32(0)));
  b.if(live, () => assignWords(b, words, b.loadVector(memory, index, vectorNames('loaded'))));
  return words;
}

/** Assigns `values[k]` to each `targets[k]`, in order. */
export function assignWords(
  b: TileBuilder,
  targets: Four<Local<'u32'>>,
  values: Four<Value<'u32'>>,
): void {
  four((k) => b.assign(targets[k], values[k]));
}

/** 2 words of `memory` at `index` in one 8-byte load where `live` holds, else zeros. */
export function loadWordPair(
  b: TileBuilder,
  memory: 'w' | 'x',
  index: Value<'u32'>,
  live: Value<'bool'>,
): Pair<Local<'u32'>> {
  const [first, second] = vectorNames(memory);
  const words = [b.let(first, u32(0)), b.let(second, u32(0))] as const;
  b.if(live, () => {
    const [low, high] = b.loadVector(memory, index, ['loaded0', 'loaded1']);
    b.assign(words[0], low);
    b.assign(words[1], high);
  });
  return words;
}

/**
 * The warps' accumulators summed through shared memory by warp 0, which stores Y[col][row] for the
 * rows below n_out and columns below n_cols; a barrier after, so the next tile may reuse it.
 * `acc[h][k]` is D[g + 8·(k >> 1)][2t + (k & 1) + 8·h] of the tile; `pair` is 2t.
 */
export function storeWmmaTile(
  b: TileBuilder,
  warp: Local<'u32'>,
  pair: Value<'u32'>,
  acc: Accumulators,
  firstRow: Local<'u32'>,
): void {
  const lane = b.laneId();
  const warps = b.schedule('warps');
  const [nOut, nCols] = [b.param('n_out'), b.param('n_cols')];
  const slotOf = (w: Value<'u32'>) => w.mul(WARP_SIZE * PARTIAL_WORDS).add(lane.mul(4));
  // A warp parks acc[0] of its lanes, then acc[1], 16 bytes a lane side by side: each 16-byte
  // access of 8 lanes spans all 32 banks once (no conflict).
  b.if(warp.gt(0), () => {
    const slot = b.let('slot', slotOf(warp));
    b.storeVector('partial', slot, acc[0]);
    b.storeVector('partial', slot.add(HALF_WORDS), acc[1]);
  });
  b.barrier();
  b.if(warp.eq(0), () => {
    b.for('other', { start: 1, end: warps }, (_, other) => {
      const parkedAt = b.let('parked_at', slotOf(other));
      const parked = [
        b.loadVector('partial', parkedAt, vectorNames('parked')),
        b.loadVector('partial', parkedAt.add(HALF_WORDS), vectorNames('parked')),
      ] as const;
      for (const h of [0, 1] as const)
        assignEach(
          b,
          acc[h],
          four((k) => acc[h][k].add(parked[h][k])),
        );
    });
    const { outRow, outCol } = b.let({ outRow: firstRow.add(lane.shr(2)), outCol: pair });
    acc.forEach((tile, h) =>
      tile.forEach((value, k) => {
        const r = b.let('out_row', outRow.add(8 * (k >> 1)));
        const c = b.let('out_col', outCol.add((k & 1) + 8 * h));
        b.if(r.lt(nOut).and(c.lt(nCols)), () => b.store('y', c.mul(nOut).add(r), value));
      }),
    );
  });
  b.barrier();
}
