// Catalog kernels `sdpa-decode` (f16 K/V) and `sdpa-decode-f32`: attention of one new token.
import { WARP_SIZE } from '../body.js';
import { defineKernel, type KernelDeclarations, type StageDeclaration } from '../builder.js';
import type { Local } from '../expression-methods.js';
import { f32 } from '../expressions.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { lazyKernel } from './lazy-kernel.js';
import {
  SDPA_PASS_DIMS,
  SDPA_STAGE_WORDS,
  SDPA_TILE,
  attendRange,
  sdpaState,
  windowCuts,
} from './sdpa-attend.js';
import { sdpaCatalogParts, sdpaQuantizedParts } from './sdpa-catalog.js';
import {
  SDPA_MAX_SPLITS,
  SDPA_MIN_SPLIT,
  SDPA_PARTIALS_LENGTH,
  sdpaCombineStage,
  minSplitOf,
  splitSpanOf,
} from './sdpa-combine.js';
import { foldWarps, stashWarp } from './sdpa-finish.js';
import {
  SDPA_DEFAULT_HEADS,
  SDPA_HEAD_COUNTS,
  SDPA_MAX_HEADS,
  typed,
  u32Param,
  type SdpaBuilder,
} from './sdpa-heads.js';
import { SDPA_SHAPE_NAMES, type SdpaCache } from './sdpa-shape.js';

// Bandwidth plan. Decode attention reads the cache once and does little arithmetic per byte; at
// decode sizes latency binds, so each warp keeps a whole step's K and V loads in flight before it
// uses one, and the range is split finely enough to fill every SM. A workgroup takes one KV head
// and `heads` (1, 2, 4 or 8) of its query heads, which share every K/V load: MHA wants 1, a GQA
// group of 8 wants 8 (heads past the group cost registers and FMAs on zero q).
//  - Lane l owns dims 4l..4l+3 of a 128-dim pass: one 8-byte f16 or 16-byte f32 load a position
//    for K and one for V, so a warp reads the head row's whole sectors; q·scale·log2e of its dims
//    stays in registers for the whole range. head_dim above 128 takes two passes, each adding K's
//    far dims (q from L1) to the scores.
//  - A step is 8 positions (4 at 8 heads): every K and V load issued, then partial dots of every
//    (position, head), summed by a reduce-scatter over the lanes; online softmax per head with a
//    finite sentinel for masked positions (no −inf − (−inf)); p through shared `probs` (two
//    buffers by step parity, one barrier a step, broadcast reads only) and p·V into each lane's dims.
//  - Each warp then writes its m, l and unscaled acc to shared; after one barrier each thread folds
//    a dim pair of a head over the warps into the split's partial.
//  - Split (FlashDecoding): `splits` grid rows of at least SDPA_MIN_SPLIT positions each store
//    (M, L, acc) in scratch; the `combine` dispatch merges a query head's splits (every load in one
//    round trip) and writes out = acc* / L*.
// H200 timing model, 32/8 heads, head_dim 128, default schedule (4 warps, 4 heads, 64 splits):
// n_kv 1024 5.49 µs, 4096 8.75 (48% of DRAM bandwidth), 32768 35.79 (80%); 2 heads and 32 splits
// 256 3.86 (the decode plan's short-range schedule). Short ranges stay latency-bound.

const powersOfTwo = (ptx: number, wgsl = ptx) => ({
  ptx: { min: 1, max: ptx, powerOfTwo: true },
  wgsl: { min: 1, max: wgsl, powerOfTwo: true },
});
const knob = (name: string, description: string, value: number, bounds: ReturnType<typeof powersOfTwo>) =>
  ({ name, description, default: value, bounds }); // prettier-ignore

type Declarations = KernelDeclarations & { readonly stages: readonly StageDeclaration[] };

function declarations(cache: SdpaCache, quantize: boolean): Declarations {
  const cached = cache === 'f16' ? 'u32' : 'f32';
  const what = cache === 'f16' ? 'f16 (two halves a u32 word)' : 'f32';
  const name = `sdpa-decode${cache === 'f16' ? '' : '-f32'}${quantize ? '-quantize' : ''}`;
  const entryPoint = name.replaceAll('-', '_');
  return {
    id: name,
    semanticVersion: quantize ? 2 : 6,
    entryPoint,
    description:
      `out[j] = softmax(scale * q[j] . K[t]) . V[t] over the visible positions t; query head j ` +
      `reads KV head j / (n_head / n_kv_head); K/V ${what} [max_ctx][n_kv_head][head_dim]; ` +
      `online softmax over split KV ranges, then a combine per query head` +
      (quantize ? ' (+ x_quant of out)' : ''),
    buffers: [
      { group: 0, binding: 0, name: 'q', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'k', element: cached, access: 'read' },
      { group: 0, binding: 2, name: 'v', element: cached, access: 'read' },
      { group: 0, binding: 3, name: 'out', element: 'f32', access: 'read_write' },
      ...(quantize
        ? ([
            { group: 0, binding: 5, name: 'x_quant', element: 'u32', access: 'read_write' },
            { group: 0, binding: 6, name: 'x_factors', element: 'f32', access: 'read_write' },
          ] as const)
        : []),
    ],
    params: [...SDPA_SHAPE_NAMES.map((name) => ({ name, type: 'u32' as const })), { name: 'scale', type: 'f32' }], // prettier-ignore
    shared: [
      // Each warp's unscaled acc for the fold (k_stage), its heads' m and l (folded), p of a step (probs).
      { name: 'k_stage', element: cached, length: `warps * ${SDPA_STAGE_WORDS}` },
      { name: 'folded', element: 'f32', length: 'warps * heads * 2' },
      { name: 'probs', element: 'f32', length: `warps * heads * ${SDPA_TILE}` },
    ],
    // Powers of two (the sweep assembles every in-bounds schedule); WGSL's 32 KiB fits 4 warps.
    schedule: [
      knob('warps', 'warps per workgroup, taking interleaved steps of 8 positions (4 at 8 heads)', 4, powersOfTwo(8, 4)), // prettier-ignore
      knob('splits', 'workgroups the visible positions are split across, merged by the combine', 64, powersOfTwo(SDPA_MAX_SPLITS)), // prettier-ignore
      knob('heads', 'query heads of a GQA group a workgroup carries, sharing its K/V loads', SDPA_DEFAULT_HEADS, powersOfTwo(SDPA_MAX_HEADS)), // prettier-ignore
    ],
    launch: {
      workgroupSize: `warps * ${WARP_SIZE}`,
      // 16 warps an SM at up to 4 heads over an f16 cache (8 heads, f32 K/V words and a lone warp,
      // whose workgroup holds the split's whole fixed work, would spill).
      ...(cache === 'f16'
        ? { maxRegisters: 'max(128, max(255 * (heads / 8), 255 * (2 / (warps + 1))))' }
        : {}),
      // Splits past ceil(n_kv / SDPA_MIN_SPLIT) would have no positions: not launched.
      grid: ['n_kv_head * ceil_div(n_head / n_kv_head, heads)', `min(splits, ceil_div(n_kv, ${SDPA_MIN_SPLIT}))`, '1'], // prettier-ignore
    },
    scratch: [{ group: 0, binding: 4, name: 'partials', element: 'f32', length: SDPA_PARTIALS_LENGTH }], // prettier-ignore
    stages: [sdpaCombineStage(entryPoint, quantize)],
  };
}

/** The workgroup's KV head, query heads and positions, which every pass shares. */
function workgroup(b: SdpaBuilder, cache: SdpaCache) {
  const warps = b.schedule('warps');
  const splits = b.schedule('splits');
  const heads = b.schedule('heads');
  const headDim = u32Param(b, 'head_dim');
  const nKvHead = u32Param(b, 'n_kv_head');
  const nKv = u32Param(b, 'n_kv');
  const window = u32Param(b, 'window');
  const { lane, warp, group, split } = b.let({
    lane: b.laneId(),
    warp: b.warpId(),
    group: u32Param(b, 'n_head').div(nKvHead),
    split: b.workgroupId('y'),
  });
  const { passes } = b.let({ passes: group.add(heads.sub(1)).div(heads) });
  const { kvHead, headPass } = b.let({
    kvHead: b.workgroupId().div(passes),
    headPass: b.workgroupId().rem(passes),
  });
  const { passHead } = b.let({ passHead: headPass.mul(heads) });
  // The pass's first query head, the heads of it that exist, and the words of a KV head's row.
  const { firstHead, headsHere, headWords } = b.let({
    firstHead: kvHead.mul(group).add(passHead),
    headsHere: group.sub(passHead).min(heads),
    headWords: cache === 'f16' ? headDim.shr(1) : headDim,
  });
  const { rowWords, headBase, visibleStart, qScale } = b.let({
    rowWords: nKvHead.mul(headWords),
    headBase: kvHead.mul(headWords),
    // The last `window` positions, or all of them: the range is never empty (n_kv ≥ 1).
    visibleStart: windowCuts(nKv, window).select(nKv.sub(window), 0),
    qScale: typed('f32', b.param('scale')).mul(f32(Math.fround(Math.LOG2E))),
  });
  // Split y's chunk of whole tiles; splits past the range are empty and store nothing (the
  // combine reads only the `used` ones).
  const { splitSpan } = b.let({
    splitSpan: splitSpanOf(nKv.sub(visibleStart), splits, minSplitOf(b)),
  });
  const { start } = b.let({ start: nKv.min(visibleStart.add(split.mul(splitSpan))) });
  const { end } = b.let({ end: nKv.min(start.add(splitSpan)) });
  // Whether head_dim exceeds 128: K's dims 128-255 then join every pass's scores.
  const { dimPasses, wide } = b.let({
    dimPasses: headDim.add(SDPA_PASS_DIMS - 1).div(SDPA_PASS_DIMS),
    wide: headDim.gt(SDPA_PASS_DIMS),
  });
  const nHead = u32Param(b, 'n_head');
  return { cache, lane, warp, warps, split, splits, nHead, headDim, headWords, rowWords, headBase, firstHead, headsHere, qScale, wide, dimPasses, start, end }; // prettier-ignore
}

/** A pass over 128 dims from `groupDim` (0, or 128 for a wide head's second), `pairs` dim pairs. */
export type SdpaPass = ReturnType<typeof workgroup> & {
  readonly groupDim: Local<'u32'>;
  readonly pairs: Local<'u32'>;
};

function body(b: SdpaBuilder, cache: SdpaCache): void {
  const at = workgroup(b, cache);
  b.if(at.start.lt(at.end), () =>
    // A pass a 128 dims of the output: a wide head's second pass computes the scores again.
    b.for('dim_pass', { start: 0, end: at.dimPasses }, (_, dimPass) => {
      const { groupDim } = b.let({ groupDim: dimPass.mul(SDPA_PASS_DIMS) });
      const pairs = b.let('pass_pairs', at.headDim.sub(groupDim).min(SDPA_PASS_DIMS).shr(1));
      const pass: SdpaPass = { ...at, groupDim, pairs };
      // The state's registers and the code for exactly the bound number of heads.
      b.specialize('heads', SDPA_HEAD_COUNTS, (n) => {
        const state = sdpaState(b, n);
        attendRange(b, pass, state, n);
        stashWarp(b, pass, state, n);
      });
      foldWarps(b, pass);
      // The next pass's fold writes `folded` over what this pass's partial reads.
      b.barrier();
    }),
  );
}

function sdpaKernel(cache: SdpaCache, quantize = false): CatalogKernel {
  const parts = sdpaCatalogParts(cache);
  return {
    spec: defineKernel(declarations(cache, quantize), (b) => body(b, cache)),
    ...parts,
    tolerance: 1e-10,
    ...(quantize ? sdpaQuantizedParts(parts) : {}),
  };
}

/** Catalog kernel `sdpa-decode`: decode attention over an f16 cache read as u32 words. */
export const sdpaDecode: CatalogKernel = lazyKernel('sdpa-decode', () => sdpaKernel('f16'));
/** Catalog kernel `sdpa-decode-f32`: decode attention over an f32 cache. */
export const sdpaDecodeF32: CatalogKernel = lazyKernel('sdpa-decode-f32', () => sdpaKernel('f32'));
/** Catalog kernel `sdpa-decode-quantize`: `sdpa-decode` whose combine also quantizes out (x_quant). */
export const sdpaDecodeQuantize: CatalogKernel = lazyKernel('sdpa-decode-quantize', () =>
  sdpaKernel('f16', true),
);
