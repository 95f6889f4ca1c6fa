// Catalog kernels `sdpa-decode` (f16 K/V) and `sdpa-decode-f32`: attention of one new token.
import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { defineKernel, type KernelDeclarations, type StageDeclaration } from '../builder.js';
import { add, and, div, f32, lt, min, mul, rem, select, shl, shr, sub } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { lazyKernel } from './lazy-kernel.js';
import {
  SDPA_CHUNK_WORDS,
  SDPA_Q_STRIDE,
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
import { foldWarps, writePartial } from './sdpa-finish.js';
import { SDPA_DEFAULT_HEADS, SDPA_MAX_HEADS, headsKnob } from './sdpa-heads.js';
import type { SdpaCache } from './sdpa-shape.js';

// Bandwidth plan. Decode attention reads the cache once and does little arithmetic per byte, so
// the kernel is built to load each K and V byte once, in whole sectors, and spend few instructions
// per byte; at decode sizes it is latency that binds, so every DRAM load a warp needs next is in
// flight before the first is used. A workgroup takes one KV head and up to `heads` (a knob: 1, 2,
// 4 or 8; default 4) of its query heads: a GQA group of `heads` or fewer shares every K/V load, a
// larger one takes more workgroups; heads above the group only cost registers and FMAs on zero q,
// so MHA wants 1 and a group of 8 wants 8. q is staged first (16-byte loads, all issued before any
// store). The warps take interleaved tiles of 32 positions of the range [start, n_kv), a chunk (32
// words = 128 bytes of each position's row) a step, software-pipelined: a step issues the 8 loads
// of the chunk after it (4 KB in flight a warp), runs its math on the staged chunk, and stores the
// loaded chunk into the warp's stage after a barrier. The next K chunk is loaded during a K chunk's
// dots, V's first during the last dots and the softmax, the next V chunk during a V chunk's p·V
// (the last V step reloads its own: one copy of the p·V code, the kernel's largest part); a tile's
// first K chunk is its one round trip not overlapped. Loads read clamped rows; stores write zeros
// past the range or the head.
//  - QK: the stage holds K, 16-byte loads, 4 positions a load, so every request is whole sectors.
//    Lane p dots position p with the heads' q (pre-scaled by scale·log2e, broadcast from shared),
//    unpacking each K word once for all the heads. Staged K rows are swizzled by 16-byte piece so
//    the lanes' row reads hit distinct banks.
//  - softmax: per head the warp max of the 32 scores, the rescale exp2(m_old − m_new) of the sum and
//    accumulators, p = exp2(s − m_new); masked lanes (past n_kv) take a finite sentinel score and
//    p = 0, so no −inf − (−inf) arises. Each lane keeps its own share of the sum (one reduction at
//    the end) and writes its p to shared for the PV step.
//  - PV: V goes through the same stage a chunk at a time (no swizzle: every lane reads one row); lane l owns dims 64c + 2l and 64c + 2l + 1 of the head (one f16 word or
//    two f32 a lane); 4 positions a trip, it reads the heads' p in one broadcast (two at 8 heads)
//    and its staged V word(s) for all 4 first, then adds p·v to column c's accumulators (code per
//    column; staged rows and p past the tile's end are zeros, so a trip may run past it).
// The heads' warp reductions (tile max, final sum) run their butterflies interleaved. At the end
// each warp writes its scaled acc to its own stage and the workgroup sums the warps' shares in
// one pass (two at head_dim 256), warp 0's first, into (M, L, acc).
// Split (FlashDecoding): the visible range is cut into `splits` chunks of whole tiles, one per
// grid row y, so few heads still fill the GPU; each workgroup stores its (M, L, acc) in scratch and
// a second dispatch, `combine`, merges a query head's splits (every stats load and value in one
// round trip) and writes out = acc* / L*.
// The default of 32 splits is fixed (a knob's default cannot depend on the shape), so n_kv decides
// how many are used: a split takes at least a tile a warp (twice that at 8 heads, whose q staging
// and fold cost twice as much): 128 positions by default, so the grid has min(splits, ceil(n_kv /
// 128)) rows (2 at n_kv 256, 8 at 1024, 32 from 4096: 32/8 heads then fill 256 workgroups, 8/2
// heads 64); under a window the rows past the visible range exit at once.
// K and V are read once, in ≥ 95% efficient sectors. H200 timing model, 32/8 heads, head_dim 128,
// default schedule (main + combine): n_kv 256 6.04 + 0.72 µs, 1024 6.15 + 0.86, 4096 8.87 + 1.10
// (35% of DRAM bandwidth, 160 registers, 8 warps/SM), 8192 14.69 + 1.10, 32768 48.30 + 1.10
// (57%); 8/2 heads at 4096 6.15 + 2.02 µs. 64 splits would fill one wave at 8192 only at 128
// registers, which spills on sm_75, sm_80 and for f32; without the cap they take two waves
// (16.36 + 1.74 µs at 8192). Short ranges stay latency-
// bound: one tile a warp, whose dot and p·V steps wait on shared loads (4 LSU issue cycles each, q
// broadcast a piece per head); the q broadcasts are also most of the shared wavefronts that bind
// long ranges.

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
    semanticVersion: quantize ? 1 : 5,
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
      { name: 'k_stage', element: cached, length: `warps * ${SDPA_STAGE_WORDS}` },
      // q, then the warps' softmax stats and the acc fold (foldWarps).
      { name: 'q_scaled', element: 'f32', length: `heads * ${SDPA_Q_STRIDE}` },
      { name: 'probs', element: 'f32', length: `warps * heads * ${SDPA_TILE}` },
    ],
    schedule: [
      {
        name: 'warps',
        description: 'warps per workgroup, taking interleaved 32-position tiles',
        default: 4,
        bounds: WARPS,
      },
      {
        name: 'splits',
        description: 'workgroups the visible positions are split across, merged by the combine',
        default: 32,
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
      // Splits past ceil(n_kv / 256) would have no positions (a split takes at least 256): not launched.
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
  const { rowWords, headBase, pairs, chunks, visibleStart, qScale } = b.let({
    rowWords: mul(nKvHead, headWords),
    headBase: mul(kvHead, headWords),
    pairs: shr(headDim, 1),
    chunks: div(add(headWords, SDPA_CHUNK_WORDS - 1), SDPA_CHUNK_WORDS),
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
  b.if(lt(start, end), (work) => {
    stageQueries(work, { warps, headDim, firstHead, headsHere, qScale });
    const range: SdpaRange = {
      cache,
      lane,
      warp,
      warps,
      headWords,
      pairs,
      rowWords,
      headBase,
      chunks,
      start,
      end,
    };
    const state = sdpaState(work);
    attendRange(work, range, state);
    const at = { firstHead, headsHere, headDim, nHead: u32Param(work, 'n_head'), split, splits };
    writePartial(work, range, foldWarps(work, range, state), at);
  });
}

interface QueryAt {
  readonly warps: Expr<'u32'>;
  readonly headDim: Expr<'u32'>;
  readonly firstHead: Expr<'u32'>;
  readonly headsHere: Expr<'u32'>;
  readonly qScale: Expr<'f32'>;
}

/** 16-byte q loads a thread issues before it stores any: the default schedule's q in one round trip. */
const Q_LOADS = 2;

/** q_scaled[h][d] = q[firstHead + h][d] · scale · log2e, zero past head_dim and past the group. */
function stageQueries(b: SdpaBuilder, at: QueryAt): void {
  const { warps, headDim, firstHead, headsHere, qScale } = at;
  const { pieces } = b.let({ pieces: mul(warps, WARP_SIZE * 4) });
  const total = mul(headsKnob(b), SDPA_Q_STRIDE);
  const step = mul(pieces, Q_LOADS);
  b.for('qi', { start: shl(b.localId(), 2), end: total, step }, (loop, first) => {
    // Every load first (pieces past the range or the group read q[0..4]), then the stores.
    const reads = Array.from({ length: Q_LOADS }, (_, u) => {
      const i = loop.let(`q_slot${u}`, u === 0 ? first : add(first, mul(pieces, u)));
      const qHead = shr(i, Math.log2(SDPA_Q_STRIDE));
      const qDim = and(i, SDPA_Q_STRIDE - 1);
      const wanted = loop.let(`q_wanted${u}`, and(lt(qHead, headsHere), lt(qDim, headDim)));
      const index = select(wanted, add(mul(add(firstHead, qHead), headDim), qDim), 0);
      const names = [0, 1, 2, 3].map((k) => `q_value${u}_${k}`);
      return { i, wanted, values: loop.loadVector('q', index, names) as Var<'f32'>[] };
    });
    for (const { i, wanted, values } of reads)
      loop.if(lt(i, total), (store) =>
        store.storeVector(
          'q_scaled',
          i,
          values.map((value) => select(wanted, mul(value, qScale), 0)) as [
            Expr<'f32'>,
            Expr<'f32'>,
            Expr<'f32'>,
            Expr<'f32'>,
          ],
        ),
      );
  });
  b.barrier();
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
