// Catalog kernels `sdpa-decode` (f16 K/V) and `sdpa-decode-f32`: attention of one new token.
import { WARP_SIZE, type Expr } from '../body.js';
import { defineKernel, type KernelDeclarations, type StageDeclaration } from '../builder.js';
import { add, div, f32, gt, lt, min, mul, rem, select, shr, sub } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { lazyKernel } from './lazy-kernel.js';
import {
  SDPA_PASS_DIMS,
  SDPA_STAGE_WORDS,
  SDPA_TILE,
  attendRange,
  sdpaState,
  u32Param,
  windowCuts,
  type SdpaBuilder,
  type SdpaRange,
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
import { writeFolded } from './sdpa-finish.js';
import { SDPA_DEFAULT_HEADS, SDPA_MAX_HEADS, headsKnob } from './sdpa-heads.js';
import type { SdpaCache } from './sdpa-shape.js';

// Bandwidth plan. Decode attention reads the cache once and does little arithmetic per byte; at
// decode sizes it is latency that binds, so each warp keeps a whole step's K and V loads in flight
// before it uses one, and the range is split finely enough to fill every SM. A workgroup takes one
// KV head and up to `heads` (a knob: 1, 2, 4 or 8; default 4) of its query heads: a GQA group of
// `heads` or fewer shares every K/V load, a larger one takes more workgroups; heads above the group
// only cost registers and FMAs on zero q, so MHA wants 1 and a group of 8 wants 8.
//  - Lanes own dims: lane l holds dims 4l..4l+3 of a 128-dim pass (one 8-byte f16 or 16-byte f32
//    load a position for K and one for V; a warp's request is the head row's 256 or 512 bytes,
//    whole sectors), and q·scale·log2e of its near dims in registers for the whole range.
//  - A step is 8 positions (4 at 8 heads): all 16 K and V loads issued, then each lane's partial
//    dots of every (position, head), which a reduce-scatter over the lanes sums so a lane ends
//    with one score; online softmax per head (the step's max by butterfly, rescale exp2(m_old −
//    m_new) of l and acc, p = exp2(s − m_new); positions past the range take a finite sentinel
//    score and p = 0, so no −inf − (−inf) arises); p goes through shared `probs` (two buffers by
//    step parity, one barrier a step) and each lane adds p·V into its dims. No shared K/V stage,
//    no bank conflicts: every shared read is a broadcast of the step's p.
//  - head_dim above 128 takes two passes of 128 output dims; each adds K's far dims (q for them
//    read from global, L1-resident) to the scores with their own reduce-scatter.
// At the end each warp writes its m, l and unscaled acc to shared, and after one barrier each
// thread folds one dim pair of one head over the warps straight into the split's partial.
// Split (FlashDecoding): the visible range is cut into `splits` chunks, one per grid row y, so
// few heads still fill the GPU; each workgroup stores its (M, L, acc) in scratch and a second
// dispatch, `combine`, merges a query head's splits (every stats load and value in one round trip)
// and writes out = acc* / L*. The default of 64 splits is fixed (a knob's default cannot depend on
// the shape), so n_kv decides how many are used: a split takes at least SDPA_MIN_SPLIT positions
// (2 steps a warp: 64 at the default schedule), so the grid has min(splits, ceil(n_kv / 64)) rows;
// under a window the rows past the visible range exit at once.
// K and V are read once, in ≥ 95% efficient sectors. H200 timing model, 32/8 heads, head_dim 128
// (main + combine): default schedule (4 warps, 4 heads, 64 splits) n_kv 1024 5.49 µs, 4096 8.75
// (48% of DRAM bandwidth; was 9.97 before this layout), 8192 12.63, 32768 35.79 (80%); 2 heads and
// 32 splits 256 3.86, 1024 4.41 (the decode plan's short-range schedule); 8 warps and 4 heads 8.14 at
// 4096 (PTX only: WGSL allows 4 warps). Short ranges stay latency-bound: two steps a warp, each
// one DRAM round trip, then the fold and the combine's launch.

/**
 * Warps per workgroup, powers of two (the schedule sweep assembles every in-bounds schedule, and
 * warps × heads × splits multiply). On WGSL 4 at most: then every heads value fits 32 KiB.
 */
const WARPS = {
  ptx: { min: 1, max: 8, powerOfTwo: true },
  wgsl: { min: 1, max: 4, powerOfTwo: true },
};
/** Splits of the KV range; the combine reads them all in a loop, so more only costs scratch. */
// Powers of two: the schedule sweep assembles every in-bounds value, and few splits values suffice.
const SPLITS = {
  ptx: { min: 1, max: SDPA_MAX_SPLITS, powerOfTwo: true },
  wgsl: { min: 1, max: SDPA_MAX_SPLITS, powerOfTwo: true },
};
/**
 * Query heads per workgroup. The spec holds code for 8 under `if (h < heads)`; binding the
 * schedule prunes the rest. At 8 heads WGSL's 32 KiB fits 4 warps, the most its bounds allow.
 */
const HEADS = {
  ptx: { min: 1, max: SDPA_MAX_HEADS, powerOfTwo: true },
  wgsl: { min: 1, max: SDPA_MAX_HEADS, powerOfTwo: true },
};

/** What a decode-attention kernel is: its cache type, and whether its combine also quantizes out. */
interface SdpaVariant {
  readonly cache: SdpaCache;
  readonly quantize: boolean;
}

function declarations({ cache, quantize }: SdpaVariant): KernelDeclarations & {
  readonly stages: readonly StageDeclaration[];
} {
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
    params: [
      ...['n_head', 'n_kv_head', 'head_dim', 'n_kv', 'max_ctx', 'window'].map((name) => ({
        name,
        type: 'u32' as const,
      })),
      { name: 'scale', type: 'f32' },
    ],
    shared: [
      // Each warp's unscaled acc for the fold (k_stage), its heads' m and l (folded), p of a step (probs).
      { name: 'k_stage', element: cached, length: `warps * ${SDPA_STAGE_WORDS}` },
      { name: 'folded', element: 'f32', length: 'warps * heads * 2' },
      { name: 'probs', element: 'f32', length: `warps * heads * ${SDPA_TILE}` },
    ],
    schedule: [
      {
        name: 'warps',
        description: 'warps per workgroup, taking interleaved steps of 8 positions (4 at 8 heads)',
        default: 4,
        bounds: WARPS,
      },
      {
        name: 'splits',
        description: 'workgroups the visible positions are split across, merged by the combine',
        default: 64,
        bounds: SPLITS,
      },
      {
        name: 'heads',
        description: 'query heads of a GQA group a workgroup carries, sharing its K/V loads',
        default: SDPA_DEFAULT_HEADS,
        bounds: HEADS,
      },
    ],
    launch: {
      workgroupSize: `warps * ${WARP_SIZE}`,
      // 16 warps an SM at up to 4 heads over an f16 cache (8 heads, f32 K/V words and a lone warp,
      // whose workgroup holds the split's whole fixed work, would spill).
      ...(cache === 'f16'
        ? { maxRegisters: 'max(128, max(255 * (heads / 8), 255 * (2 / (warps + 1))))' }
        : {}),
      // Splits past ceil(n_kv / SDPA_MIN_SPLIT) would have no positions (a split takes at least
      // that many): not launched.
      grid: [
        'n_kv_head * ceil_div(n_head / n_kv_head, heads)',
        `min(splits, ceil_div(n_kv, ${SDPA_MIN_SPLIT}))`,
        '1',
      ],
    },
    scratch: [
      { group: 0, binding: 4, name: 'partials', element: 'f32', length: SDPA_PARTIALS_LENGTH },
    ],
    stages: [sdpaCombineStage(entryPoint, quantize)],
  };
}

function body(b: SdpaBuilder, cache: SdpaCache): void {
  const warps = b.schedule('warps');
  const splits = b.schedule('splits');
  const headDim = u32Param(b, 'head_dim');
  const nKvHead = u32Param(b, 'n_kv_head');
  const nKv = u32Param(b, 'n_kv');
  const window = u32Param(b, 'window');
  const { lane, warp, group, split } = b.let({
    lane: b.laneId(),
    warp: b.warpId(),
    group: div(u32Param(b, 'n_head'), nKvHead),
    split: b.workgroupId('y'),
  });
  const heads = headsKnob(b);
  const { passes } = b.let({ passes: div(add(group, sub(heads, 1)), heads) });
  const { kvHead, headPass } = b.let({
    kvHead: div(b.workgroupId(), passes),
    headPass: rem(b.workgroupId(), passes),
  });
  const { passHead } = b.let({ passHead: mul(headPass, heads) });
  const { firstHead, headsHere, headWords } = b.let({
    firstHead: add(mul(kvHead, group), passHead),
    headsHere: min(sub(group, passHead), heads),
    headWords: cache === 'f16' ? shr(headDim, 1) : headDim,
  });
  const { rowWords, headBase, visibleStart, qScale } = b.let({
    rowWords: mul(nKvHead, headWords),
    headBase: mul(kvHead, headWords),
    // The last `window` positions, or all of them: the range is never empty (n_kv ≥ 1).
    visibleStart: select(windowCuts(nKv, window), sub(nKv, window), 0),
    qScale: mul(b.param('scale') as Expr<'f32'>, f32(Math.fround(Math.LOG2E))),
  });
  // Split y's chunk of whole tiles; splits past the range are empty and store nothing (the
  // combine reads only the `used` ones).
  const { splitSpan } = b.let({
    splitSpan: splitSpanOf(sub(nKv, visibleStart), splits, minSplitOf(b)),
  });
  const { start } = b.let({ start: min(nKv, add(visibleStart, mul(split, splitSpan))) });
  const { end } = b.let({ end: min(nKv, add(start, splitSpan)) });
  const { dimPasses, wide } = b.let({
    dimPasses: div(add(headDim, SDPA_PASS_DIMS - 1), SDPA_PASS_DIMS),
    wide: gt(headDim, SDPA_PASS_DIMS),
  });
  b.if(lt(start, end), (work) => {
    // A pass a 128 dims of the output: a wide head's second pass computes the scores again.
    work.for('dim_pass', { start: 0, end: dimPasses }, (pass, dimPass) => {
      const { groupDim } = pass.let({ groupDim: mul(dimPass, SDPA_PASS_DIMS) });
      const range: SdpaRange = {
        cache,
        lane,
        warp,
        warps,
        headWords,
        rowWords,
        headBase,
        headDim,
        firstHead,
        headsHere,
        qScale,
        wide,
        groupDim,
        pairs: pass.let('pass_pairs', shr(min(sub(headDim, groupDim), SDPA_PASS_DIMS), 1)),
        start,
        end,
      };
      const state = sdpaState(pass);
      attendRange(pass, range, state);
      const nHead = u32Param(pass, 'n_head');
      writeFolded(pass, range, state, { firstHead, headsHere, headDim, groupDim, nHead, split, splits }); // prettier-ignore
      // The next pass's fold writes `folded` over what this pass's partial reads.
      pass.barrier();
    });
  });
}

function sdpaSpec(variant: SdpaVariant): KernelSpec {
  return defineKernel(declarations(variant), (b) => body(b, variant.cache));
}

function sdpaKernel(cache: SdpaCache, quantize = false): CatalogKernel {
  const parts = sdpaCatalogParts(cache);
  return {
    spec: sdpaSpec({ cache, quantize }),
    ...parts,
    tolerance: 1e-10,
    ...(quantize ? sdpaQuantizedParts(parts) : {}),
  };
}

/** Catalog kernel `sdpa-decode`: decode attention over an f16 cache read as u32 words. */
export const sdpaDecode: CatalogKernel = lazyKernel('sdpa-decode', () => sdpaKernel('f16'));
/** Catalog kernel `sdpa-decode-f32`: decode attention over an f32 cache. */
export const sdpaDecodeF32: CatalogKernel = lazyKernel('sdpa-decode-f32', () => sdpaKernel('f32'));
/**
 * Catalog kernel `sdpa-decode-quantize`: `sdpa-decode`, whose combine also writes out quantized into
 * x_quant and x_factors as a row-streaming mat-vec's first dispatch would quantize it, so the
 * output projection after it runs its row dispatch alone.
 */
export const sdpaDecodeQuantize: CatalogKernel = lazyKernel('sdpa-decode-quantize', () =>
  sdpaKernel('f16', true),
);
