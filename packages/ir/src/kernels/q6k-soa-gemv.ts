import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, and, convert, div, eq, f32, fma, ge, lt, mul, or } from '../expressions.js';
import { select, shr, sub, u32, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { repack, unpack } from '../quant/repack.js';
import { packWords } from '../quant/words.js';
import { SECTOR_WORDS, gemvKernel } from './legacy-gemv-interface.js';
import type { GemvBuilder, GemvRows } from './legacy-gemv-interface.js';
import { ROWS, forRows, perRow, vectorNames, type PerRow } from './locals.js';
import { randomQ6kBlocks } from './gemv-catalog.js';

const { blockSize: BLOCK, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Words per block of each repacked array: ql 128 bytes, qh 64, scales 16 (d is 2 bytes). */
const [QL_WORDS, QH_WORDS, SCALE_WORDS] = [32, 16, 4];
/** Lane 8 + k holds the d word of blocks 2k and 2k+1 of 16. */
const D_LANE = 8;
/**
 * PTX workgroup sizes: 2 to 12 warps, even counts. The body wants ~56 registers a thread (64 on
 * sm_75); under `.reqntid` ptxas caps registers so that more blocks fit on an SM, and at 96, 416,
 * 480, 512, 608 and 640 threads its cap (40 or 48) is below that: it spills on sm_80, sm_86, sm_89
 * or sm_90 (ptxas 13.0). `pnpm sweep:schedules` finds no spill at any in-bounds schedule.
 */
const PTX_WORKGROUP_SIZES = { min: 64, max: 384, multipleOf: 64 };

// Bandwidth plan (layout in quant/LAYOUTS.md): two rows a warp; repacked rows start on a sector.
// Per row, two blocks a step: lane t takes block 2·step + t/16, half h = (t/8) % 2 and l0 =
// 4·(t % 8) of it (ql words 16h + t%8 and 16h + 8 + t%8, qh word 8h + t%8): 64 values, every ql
// and qh byte loaded once by one lane, each load instruction in whole sectors (qh: 128 contiguous
// bytes). Lanes 0-7 load the step's 8 scale words (a sector); a lane's scales[8h + l0/16 +
// {0,2,4,6}] come by shuffle from scale words 2(t/8) and 2(t/8) + 1. Every eighth step lanes 8-15
// load the next 8 d words (16 blocks' d, a sector), so d is loaded once, re-touching no sector; a
// step's d word comes by shuffle from lane 8 + step % 8. A row's zero padding (< 32 bytes) is never
// read.

function setup(b: GemvBuilder, blocks: Var<'u32'>) {
  // Row stride 32·⌈210·nb/32⌉ bytes, in words.
  const sectors = div(add(mul(blocks, BLOCK_BYTES), 31), 32);
  const locals = b.let({
    rowWords: mul(sectors, SECTOR_WORDS),
    qhStart: mul(blocks, QL_WORDS),
    scaleStart: mul(blocks, QL_WORDS + QH_WORDS),
    dStart: mul(blocks, QL_WORDS + QH_WORDS + SCALE_WORDS),
    dWords: div(add(blocks, 1), 2),
  });
  return { blocks, ...locals, ...b.let({ steps: locals.dWords }) };
}

function laneSetup(b: GemvBuilder, lane: Var<'u32'>) {
  const { pair, half, quad } = b.let({
    pair: shr(lane, 4),
    half: and(shr(lane, 3), 1),
    quad: and(lane, 7),
  });
  const rest = b.let({
    // The lane's ql word in a step: 32·pair + 16·half + quad = 2·lane − quad.
    qlLane: sub(mul(lane, 2), quad),
    scaleSource: mul(shr(lane, 3), 2),
    // Byte of scales[8h + s] in scale word 2h, s = l0/16 = quad/4.
    scaleShift: mul(shr(quad, 2), 8),
  });
  return { pair, half, quad, ...rest };
}

function row({ rows, live, clamped, lane }: GemvRows<'pair'>, setup: Setup, lanes: Lanes) {
  const { blocks, rowWords, qhStart, scaleStart, dStart, dWords, steps } = setup;
  const { pair, half, quad, qlLane, scaleSource, scaleShift } = lanes;
  const { rowBase } = perRow(rows, { rowBase: (k) => mul(clamped[k], rowWords) });
  // meta: lanes 0-7 hold this step's scale words, lanes 8-15 d words (reloaded every eighth step).
  const { total, held: meta } = perRow(rows, { total: () => f32(0), held: () => u32(0) });
  rows.for('step', { start: 0, end: steps }, (st, step) => {
    const { block } = st.let({ block: add(mul(step, 2), pair) });
    const { onBlock } = st.let({ onBlock: lt(block, blocks) });
    const scaleWord = add(mul(step, 2 * SCALE_WORDS), lane);
    const isScale = and(lt(lane, D_LANE), lt(scaleWord, mul(blocks, SCALE_WORDS)));
    const { dWord } = st.let({ dWord: add(step, sub(lane, D_LANE)) });
    const dLane = and(ge(lane, D_LANE), lt(lane, 16));
    const isD = and(and(eq(and(step, 7), 0), dLane), lt(dWord, dWords));
    const metaIndex = select(isScale, add(scaleStart, scaleWord), add(dStart, dWord));
    const dSource = add(D_LANE, and(step, 7));
    const words = forRows((k) => {
      const ql0 = st.let(`ql0_${k}`, u32(0));
      const ql1 = st.let(`ql1_${k}`, u32(0));
      const qh = st.let(`qh_${k}`, u32(0));
      st.if(and(live[k], onBlock), (load) => {
        const ql = add(rowBase[k], add(mul(step, 2 * QL_WORDS), qlLane));
        load.assign(ql0, load.load('w', ql));
        load.assign(ql1, load.load('w', add(ql, SECTOR_WORDS)));
        const qhIndex = add(add(rowBase[k], qhStart), add(mul(step, 2 * QH_WORDS), lane));
        load.assign(qh, load.load('w', qhIndex));
      });
      const metaAt = add(rowBase[k], metaIndex);
      st.if(and(live[k], or(isScale, isD)), (load) => load.assign(meta[k], load.load('w', metaAt)));
      const scaleLow = st.shuffle('idx', `scale_low_${k}`, meta[k], scaleSource);
      const scaleHigh = st.shuffle('idx', `scale_high_${k}`, meta[k], add(scaleSource, 1));
      const dPair = st.shuffle('idx', `d_pair_${k}`, meta[k], dSource);
      return { ql0, ql1, qh, scaleLow, scaleHigh, dPair };
    });
    st.if(and(live.a, onBlock), (quants) => {
      const dOf = (p: Var<'u32'>) => select(eq(pair, 0), unpackHalf(p, 0), unpackHalf(p, 1));
      const d = forRows((k) => quants.let(`d_${k}`, dOf(words[k].dPair)));
      const { xIndex } = quants.let({
        xIndex: add(add(mul(block, BLOCK), mul(half, 128)), mul(quad, 4)),
      });
      const acc: PerRow<Expr<'f32'>> = { ...total };
      // Value group k (+32k): ql word k % 2, nibble k / 2, qh bits 2k, scale byte k % 2 of
      // scale word k / 2 (scales s, s+2 | s+4, s+6).
      for (let k = 0; k < 4; k++) {
        const xs = quants.loadVector('x', add(xIndex, 32 * k), vectorNames(`x${k}_`));
        const shift = add(scaleShift, 16 * (k % 2));
        for (const r of ROWS) {
          const { ql0, ql1, qh, scaleLow, scaleHigh } = words[r];
          const ql = k % 2 ? ql1 : ql0;
          const sum = quants.let(`sum${k}_${r}`, f32(0));
          xs.forEach((x, j) => {
            const low = and(shr(ql, 8 * j + 4 * (k >> 1)), 15);
            const high = mul(and(shr(qh, 8 * j + 2 * k), 3), 16);
            quants.assign(sum, fma(sub(convert('f32', or(low, high)), 32), x, sum));
          });
          const word = k < 2 ? scaleLow : scaleHigh;
          const byte = quants.let(`scale${k}_${r}`, and(shr(word, shift), 255));
          // int8: bytes of 128 and above are negative.
          const scale = sub(convert('f32', byte), mul(convert('f32', shr(byte, 7)), 256));
          acc[r] = fma(mul(d[r], scale), sum, acc[r]);
        }
      }
      for (const r of ROWS) quants.assign(total[r], acc[r]);
    });
  });
  return total;
}
type Setup = ReturnType<typeof setup>;
type Lanes = ReturnType<typeof laneSetup>;

/**
 * Catalog kernel `q6k-soa-gemv`: q6k-gemv's product on rows repacked by `repack` (so every load is
 * aligned; `weights.fromNative` converts GGUF rows); `n_in` must be a multiple of 256.
 */
export const q6kSoaGemv = gemvKernel(
  { id: 'q6k-soa-gemv', semanticVersion: 1, type: 'q6_K', rows: 'pair', setup, laneSetup, row },
  'of Q6_K blocks repacked structure-of-arrays',
  {
    ptxGroupSizes: PTX_WORKGROUP_SIZES,
    offsetHeadroom: 4 * WARP_SIZE, // a window
    // Rows of 32·⌈210·nb/32⌉ bytes (LAYOUTS.md); plain arithmetic, safe on bad shapes.
    layoutBytes: (nOut, nIn) => nOut * 32 * Math.ceil((BLOCK_BYTES * Math.floor(nIn / BLOCK)) / 32),
    toNative: (...rows) => unpack('q6_K', ...rows),
    fromNative: (...rows) => repack('q6_K', ...rows),
    // Random native blocks (see q6k-gemv), repacked.
    generateWeights: (nOut, nIn, ...rest) =>
      packWords(repack('q6_K', randomQ6kBlocks(nOut, nIn, ...rest), nOut, nIn)),
  },
);
