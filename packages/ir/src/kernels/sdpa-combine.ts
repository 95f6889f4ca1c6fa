// The second dispatch of decode attention: merges the splits' partial softmaxes of each query head.
import type { Expr } from '../body.js';
import type { StageDeclaration } from '../builder.js';
import { add, and, div, exp2, gt, max, mul, select, shl, shr, sub } from '../expressions.js';
import { SDPA_NO_SCORE, type SdpaBuilder } from './sdpa-attend.js';

/** Threads of a combine workgroup (one workgroup per query head, a thread per 64th dim). */
export const SDPA_COMBINE_THREADS = 64;

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

/** Fewest positions a split takes: below it the per-workgroup work outweighs the range's. */
export const SDPA_MIN_SPLIT = 256;

/** Positions a split takes: ceil(visible / splits) rounded up to whole tiles, at least SDPA_MIN_SPLIT. */
export function splitSpanOf(visible: Expr<'u32'>, splits: Expr<'u32'>): Expr<'u32'> {
  const even = shl(shr(add(div(add(visible, sub(splits, 1)), splits), 31), 5), 5);
  return max(even, SDPA_MIN_SPLIT);
}

const u32Param = (b: SdpaBuilder, name: string): Expr<'u32'> => b.param(name) as Expr<'u32'>;

/**
 * out[j] = Σ_s acc_s·exp2(M_s − M*) / Σ_s L_s·exp2(M_s − M*), M* = max_s M_s. Only the `used`
 * splits that had positions are read; a visible range is never empty, so L* > 0.
 */
function combineBody(b: SdpaBuilder): void {
  const splits = b.schedule('splits');
  const headDim = u32Param(b, 'head_dim');
  const nHead = u32Param(b, 'n_head');
  const { head } = b.let({ head: b.workgroupId() });
  const nKv = u32Param(b, 'n_kv');
  const window = u32Param(b, 'window');
  const { visible } = b.let({ visible: select(and(gt(window, 0), gt(nKv, window)), window, nKv) });
  const { span } = b.let({ span: splitSpanOf(visible, splits) });
  // The splits that had positions (the rest stored nothing): never more than `splits`.
  const { used } = b.let({ used: div(add(visible, sub(span, 1)), span) });
  const { firstRow } = b.let({ firstRow: mul(head, splits) });
  const statsOf = (loop: SdpaBuilder, s: Expr<'u32'>, name: string): Expr<'f32'>[] =>
    loop.loadVector('partials', partialAt(nHead, splits, headDim, add(firstRow, s)).stats, [
      `${name}_m`,
      `${name}_l`,
    ]) as Expr<'f32'>[];
  const most = b.let('most', SDPA_NO_SCORE, 'f32');
  b.for('s_max', { start: 0, end: used }, (loop, s) => {
    const [m] = statsOf(loop, s, 'max');
    loop.assign(most, max(most, m!));
  });
  const total = b.let('total', 0, 'f32');
  b.for('s_sum', { start: 0, end: used }, (loop, s) => {
    const [m, l] = statsOf(loop, s, 'sum');
    loop.assign(total, add(total, mul(l!, exp2(sub(m!, most)))));
  });
  const { outBase } = b.let({ outBase: mul(head, headDim) });
  b.for('d', { start: b.localId(), end: headDim, step: SDPA_COMBINE_THREADS }, (loop, d) => {
    const acc = loop.let('acc', 0, 'f32');
    loop.for('s_acc', { start: 0, end: used }, (inner, s) => {
      const row = add(firstRow, s);
      const [m] = statsOf(inner, s, 'acc');
      const at = add(partialAt(nHead, splits, headDim, row).acc, d);
      const value = inner.load('partials', at) as Expr<'f32'>;
      inner.assign(acc, add(acc, mul(value, exp2(sub(m!, most)))));
    });
    loop.store('out', add(outBase, d), div(acc, total));
  });
}

/** The combine dispatch of `entryPoint`'s op: a workgroup per query head. */
export function sdpaCombineStage(entryPoint: string): StageDeclaration {
  return {
    entryPoint: `${entryPoint}_combine`,
    shared: [],
    launch: { workgroupSize: `${SDPA_COMBINE_THREADS}`, grid: ['n_head', '1', '1'] },
    body: combineBody,
  };
}
