// What both tensor-core mat-vec kernels (wmma-gemv, q4k-soa-wmma) do alike: guarded word loads, and
// the end of a 16-row tile, where each warp holds D fragments for its share of K and warp 0 sums
// them and stores Y.
import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import type { BodyBuilder } from '../builder.js';
import { add, and, eq, gt, lt, mul, shr, u32 } from '../expressions.js';

/** f32 a lane parks in shared memory for the cross-warp sum: both n8 tiles' D fragments. */
const PARTIAL_WORDS = 8;
/** Words of a warp's parked acc[0..3] (a lane's 4 side by side), before its acc[4..7]. */
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

type Four<T> = [T, T, T, T];

/**
 * `count` words of `memory` at `index` as locals named by `fresh`: one vector load, or, when
 * `live` is given, zeros replaced by the vector load only where `live` holds.
 */
export function loadWords(
  b: TileBuilder,
  fresh: (prefix: string) => string,
  memory: 'w' | 'x',
  index: Expr<'u32'>,
  count: 2 | 4,
  live: Expr<'bool'> | undefined,
): Var<'u32'>[] {
  const prefix = `${fresh(memory)}_`;
  const names = Array.from({ length: count }, (_, k) => `${prefix}${k}`);
  if (live === undefined) return b.loadVector(memory, index, names);
  const words = names.map((name) => b.let(name, u32(0)));
  b.if(live, (then) => {
    const loaded = then.loadVector(
      memory,
      index,
      names.map((name) => `${name}l`),
    );
    words.forEach((word, k) => then.assign(word, loaded[k]!));
  });
  return words;
}

/**
 * The warps' accumulators summed through shared memory by warp 0, which stores Y[col][row] for the
 * rows below n_out and columns below n_cols; a barrier after, so the next tile may reuse it.
 * `acc[i]` is D[g + 8·((i >> 1) & 1)][2t + (i & 1) + 8·(i >> 2)] of the tile; `pair` is 2t.
 */
export function storeWmmaTile(
  b: TileBuilder,
  warp: Var<'u32'>,
  pair: Expr<'u32'>,
  acc: readonly Var<'f32'>[],
  firstRow: Var<'u32'>,
): void {
  const lane = b.laneId();
  const warps = b.schedule('warps');
  const [nOut, nCols] = [b.param('n_out'), b.param('n_cols')];
  // A warp parks acc[0..3] of its lanes, then acc[4..7], 16 bytes a lane side by side: each
  // 16-byte access of 8 lanes spans all 32 banks once (no conflict).
  b.if(gt(warp, 0), (park) => {
    const { slot } = park.let({ slot: add(mul(warp, WARP_SIZE * PARTIAL_WORDS), mul(lane, 4)) });
    park.storeVector('partial', slot, acc.slice(0, 4) as Four<Var<'f32'>>);
    park.storeVector('partial', add(slot, HALF_WORDS), acc.slice(4, 8) as Four<Var<'f32'>>);
  });
  b.barrier();
  b.if(eq(warp, 0), (sum) => {
    sum.for('other', { start: 1, end: warps }, (loop, other) => {
      const { parkedAt } = loop.let({
        parkedAt: add(mul(other, WARP_SIZE * PARTIAL_WORDS), mul(lane, 4)),
      });
      const parked = [
        ...loop.loadVector('partial', parkedAt, ['parked0', 'parked1', 'parked2', 'parked3']),
        ...loop.loadVector('partial', add(parkedAt, HALF_WORDS), [
          'parked4',
          'parked5',
          'parked6',
          'parked7',
        ]),
      ];
      acc.forEach((local, i) => loop.assign(local, add(local, parked[i]!)));
    });
    const { outRow, outCol } = sum.let({ outRow: add(firstRow, shr(lane, 2)), outCol: pair });
    for (let i = 0; i < 8; i++) {
      const r = sum.let(`out_row${i}`, add(outRow, 8 * ((i >> 1) & 1)));
      const c = sum.let(`out_col${i}`, add(outCol, (i & 1) + 8 * (i >> 2)));
      sum.if(and(lt(r, nOut), lt(c, nCols)), (store) =>
        store.store('y', add(mul(c, nOut), r), acc[i]!),
      );
    }
  });
  b.barrier();
}
