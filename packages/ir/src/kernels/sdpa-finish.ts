// Folds the warps' partial softmaxes of one workgroup, then stores them as the split's partial.
import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, and, eq, exp2, lt, max, mul, select, shl, shr, sub } from '../expressions.js';
import {
  SDPA_COLUMNS,
  SDPA_NO_SCORE,
  SDPA_Q_STRIDE,
  type SdpaBuilder,
  type SdpaRange,
  type SdpaState,
} from './sdpa-attend.js';
import { partialAt } from './sdpa-combine.js';
import {
  ALL_HEADS,
  forHead,
  headsKnob,
  ladderHeads,
  loadHeads,
  storeHeads,
  switchHeads,
} from './sdpa-heads.js';

/** Where the pass's output goes. */
export interface SdpaOutput {
  /** The pass's first query head. */
  readonly firstHead: Var<'u32'>;
  /** Query heads of the pass that exist (1 to the `heads` knob). */
  readonly headsHere: Var<'u32'>;
  readonly headDim: Expr<'u32'>;
}

/** The workgroup's softmax over its range, per head of the pass: max M and sum L (log2 units). */
export interface SdpaFolded {
  readonly most: readonly Var<'f32'>[];
  readonly total: readonly Var<'f32'>[];
}

/**
 * Folds the warps' (m, l, acc) into the workgroup's: M = the heads' max over warps,
 * L = Σ_w l_w·exp2(m_w − M), and in shared `q_scaled` (free once the tiles are done) the
 * unnormalized acc = Σ_w acc_w·exp2(m_w − M), summed one warp a round. The workgroup's split
 * of the KV range then stores (M, L, acc) as its partial (writePartial).
 */
export function foldWarps(b: SdpaBuilder, range: SdpaRange, state: SdpaState): SdpaFolded {
  const { lane, warp, warps } = range;
  const heads = ALL_HEADS;
  // Warp w's m then l of each head, in `q_scaled`: its last reads (the dots) are behind the tiles'
  // barriers, and the acc fold below writes it only after its first barrier.
  const statsWords = mul(headsKnob(b), 2);
  const sums: Var<'f32'>[] = [];
  ladderHeads(
    b,
    (head, h) => void sums.push(head.reduce('add', `l_sum${h}`, state.l[h]!)),
    (done, n) =>
      done.if(eq(lane, 0), (first) => {
        const base = mul(warp, statsWords);
        storeHeads(first, 'q_scaled', base, state.m.slice(0, n));
        storeHeads(first, 'q_scaled', add(base, n), sums.slice(0, n));
      }),
  );
  b.barrier();
  const most = heads.map((h) => b.let(`most${h}`, SDPA_NO_SCORE, 'f32'));
  b.for('w_max', { start: 0, end: warps }, (loop, w) => {
    switchHeads(loop, (block, n, tag) => {
      const names = heads.slice(0, n).map((h) => `wm${h}${tag}`);
      const ms = loadHeads(block, 'q_scaled', mul(w, statsWords), names);
      ms.forEach((m, h) => block.assign(most[h]!, max(most[h]!, m)));
    });
  });
  const total = heads.map((h) => b.let(`total${h}`, 0, 'f32'));
  b.for('w_sum', { start: 0, end: warps }, (loop, w) => {
    const base = mul(w, statsWords);
    switchHeads(loop, (block, n, tag) => {
      const ms = loadHeads(
        block,
        'q_scaled',
        base,
        heads.slice(0, n).map((h) => `sm${h}${tag}`),
      );
      const ls = loadHeads(
        block,
        'q_scaled',
        add(base, n),
        heads.slice(0, n).map((h) => `sl${h}${tag}`),
      );
      ms.forEach((m, h) =>
        block.assign(total[h]!, add(total[h]!, mul(ls[h]!, exp2(sub(m, most[h]!))))),
      );
    });
  });
  const factor = heads.map((h) => b.let(`factor${h}`, exp2(sub(state.m[h]!, most[h]!))));
  const share = (h: number, e: number): Expr<'f32'> => mul(state.acc[h]![0]![e]!, factor[h]!);
  b.for('w_add', { start: 0, end: warps }, (loop, w) => {
    loop.barrier();
    // Column by column through column 0's registers (the acc is not read after the fold).
    loop.if(eq(warp, w), (mine) =>
      mine.for('fold_column', { start: 0, end: shr(add(range.pairs, 31), 5) }, (columns, c) => {
        const { dim } = columns.let({ dim: add(shl(lane, 1), shl(c, 6)) });
        columns.if(lt(add(lane, shl(c, 5)), range.pairs), (inside) =>
          heads.forEach((h) =>
            forHead(inside, h, (head) => {
              const at = head.let(`sum_slot${h}`, h === 0 ? dim : add(dim, h * SDPA_Q_STRIDE));
              const earlier = readShares(head, at, `prev${h}`);
              const values = earlier.map((prev, e) => add(select(eq(w, 0), 0, prev), share(h, e)));
              writeShares(head, at, values);
            }),
          ),
        );
        shiftColumns(columns, state);
      }),
    );
  });
  b.barrier();
  return { most, total };
}

/** acc[h][c] ← acc[h][c + 1]: column 0's registers take the next column's dims. */
function shiftColumns(b: SdpaBuilder, state: SdpaState): void {
  for (const h of ALL_HEADS)
    forHead(b, h, (head) => {
      const columns = state.acc[h]!;
      for (let c = 0; c + 1 < SDPA_COLUMNS; c++)
        columns[c]!.forEach((value, e) => head.assign(value, columns[c + 1]![e]!));
    });
}

/** Where the pass's partial goes: split `split` of `splits` in scratch `partials`. */
export interface SdpaPartialAt extends SdpaOutput {
  readonly nHead: Expr<'u32'>;
  readonly split: Expr<'u32'>;
  readonly splits: Expr<'u32'>;
}

/**
 * Stores the pass's (M, L) and unnormalized acc per head that exists into `partials` (layout in
 * sdpa-combine.ts), head_dim values each, by the whole workgroup; the combine stage normalizes.
 */
export function writePartial(
  b: SdpaBuilder,
  range: SdpaRange,
  folded: SdpaFolded,
  at: SdpaPartialAt,
): void {
  const { firstHead, headsHere, headDim, nHead, split, splits } = at;
  const { most, total } = folded;
  // The split's row of head h: (firstHead + h)·splits + split.
  const rowOf = (h: Expr<'u32'>): Expr<'u32'> => add(mul(add(firstHead, h), splits), split);
  const pick = (values: readonly Expr<'f32'>[], h: Expr<'u32'>): Expr<'f32'> =>
    values
      .slice(1)
      .reduce<Expr<'f32'>>((picked, value, k) => select(eq(h, k + 1), value, picked), values[0]!);
  const local = b.let('stat_head', b.localId());
  b.if(lt(local, headsHere), (write) => {
    const where = partialAt(nHead, splits, headDim, rowOf(local));
    switchHeads(write, (block, n) =>
      block.storeVector('partials', where.stats, [
        pick(most.slice(0, n), local),
        pick(total.slice(0, n), local),
      ]),
    );
  });
  const rows = mul(headsKnob(b), SDPA_Q_STRIDE);
  // Two values a thread a trip (acc rows start at even words: head_dim and the stats are even).
  const step = mul(range.warps, WARP_SIZE * 2);
  b.for('oi', { start: shl(b.localId(), 1), end: rows, step }, (loop, i) => {
    const { outHead, outDim } = loop.let({
      outHead: shr(i, Math.log2(SDPA_Q_STRIDE)),
      outDim: and(i, SDPA_Q_STRIDE - 1),
    });
    loop.if(and(lt(outHead, headsHere), lt(outDim, headDim)), (write) => {
      const where = partialAt(nHead, splits, headDim, rowOf(outHead));
      const values = write.loadVector('q_scaled', i, ['out_0', 'out_1']);
      write.storeVector('partials', add(where.acc, outDim), [...values] as [Var, Var]);
    });
  });
}

function readShares(b: SdpaBuilder, at: Expr<'u32'>, name: string): Var<'f32'>[] {
  return b.loadVector('q_scaled', at, [`${name}_0`, `${name}_1`]) as Var<'f32'>[];
}

function writeShares(b: SdpaBuilder, at: Expr<'u32'>, values: readonly Expr<'f32'>[]): void {
  b.storeVector('q_scaled', at, values as [Expr<'f32'>, Expr<'f32'>]);
}
