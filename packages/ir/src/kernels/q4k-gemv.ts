import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import {
  add,
  and,
  bitcast,
  bitSelect,
  convert,
  dot4I8,
  fma,
  le,
  min,
  mul,
  neg,
} from '../expressions.js';
import { shr, sub, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { randomQ4kWords } from './gemv-catalog.js';
import { SECTOR_WORDS, gemvKernel, type GemvBuilder, type GemvStep } from './gemv-interface.js';
import { vectorNames } from './locals.js';

const { blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q4_K;
const BLOCK_WORDS = BLOCK_BYTES / 4;
/** Header words (0: d and dmin, 1-3: scales and mins) before a block's 32 qs words. */
const HEADER_WORDS = 4;
/** Lanes a block: lane h of them takes qs chunks h and h + 2 (sub-blocks 2h, 2h+1, 2h+4, 2h+5). */
const BLOCK_LANES = 2;
const STEP_BLOCKS = WARP_SIZE / BLOCK_LANES;
/** 16-byte loads a lane stages a step: the step's blocks from 0 or 4 words into a sector. */
const STAGING_LOADS = Math.ceil((STEP_BLOCKS * BLOCK_WORDS + HEADER_WORDS) / (4 * WARP_SIZE));
const STAGING_WORDS = STAGING_LOADS * 4 * WARP_SIZE;

// Bandwidth plan: a step is 16 consecutive blocks of a row, 2 lanes a block. Blocks are 144 bytes,
// 16-byte aligned but headers interleave with quants, so the warp stages the step's bytes from the
// sector holding its first (16-byte loads, 512 contiguous bytes a request) into its shared slice.
// Lane h of a block reads the header and qs chunks h and h + 2: chunk c is 8 words whose low
// nibbles are sub-block 2c (x words 16c..16c+7 of the block) and high nibbles sub-block 2c + 1 (the
// next 8). Nibbles meet x_high and x_low in 32 dot4I8 a chunk; each sub-block's i32 sum times its
// 6-bit scale is scaled in f32 by its x scale and d, less dmin · min · (its x values' sum, x_sum).

function step(context: GemvStep<undefined>) {
  const { b, total, row, live, blocks, rowBlock, tileBlock, blocksLeft, lane, stagingBase } =
    context;
  const { stepWord, stepBlocks } = b.let({
    stepWord: mul(add(mul(row, blocks), rowBlock), BLOCK_WORDS),
    stepBlocks: min(blocksLeft, STEP_BLOCKS),
  });
  // Staged from the step's sector (128-byte aligned, 512 bytes a load): lane l's word `rel` + 128k
  // of the step, loaded when within it, so each weight byte is read once and whole requests stay
  // on the step's sectors (words before it wrap around to huge).
  const { offset } = b.let({ offset: and(stepWord, SECTOR_WORDS - 1) });
  const { rel, span, stepStaged } = b.let({
    rel: sub(mul(lane, 4), offset),
    span: sub(mul(stepBlocks, BLOCK_WORDS), 4),
    stepStaged: add(stagingBase, offset),
  });
  const { laneWord, stagingSlot } = b.let({
    laneWord: add(stepWord, rel),
    stagingSlot: add(stagingBase, mul(lane, 4)),
  });
  // A warp past the last row loads nothing (and adds nothing below).
  // Loads 1 on nest (each runs only if the one before did: rel + 128k does not wrap for k >= 1), so
  // their addresses are computed once, in load 1's block.
  const stage = (block: GemvBuilder, k: number): void => {
    const at = 4 * WARP_SIZE * k;
    block.if(le(add(rel, at), span), (load) => {
      const words = load.loadVector('w', add(laneWord, at), vectorNames(`stage${k}_`));
      load.storeVector('staging', add(stagingSlot, at), words);
      if (k >= 1 && k + 1 < STAGING_LOADS) stage(load, k + 1);
    });
  };
  b.if(live, (copy) => {
    stage(copy, 0);
    stage(copy, 1);
  });
  b.barrier();
  // Lane places are recomputed each step, not kept from laneSetup: with the 20 staged words in
  // flight, ptxas keeps the loop within 64 registers only so. The lane's block is in the step when
  // its header word is at most the last staged 16 bytes'.
  const { block, half } = b.let({ block: shr(lane, 1), half: and(lane, BLOCK_LANES - 1) });
  const { blockWord } = b.let({ blockWord: mul(block, BLOCK_WORDS) });
  b.if(and(live, le(blockWord, span)), (inStep) => {
    const { header, xWord } = inStep.let({
      header: add(stepStaged, blockWord),
      // Chunk h's first value is 64·block + 16·h words into the tile's x_high/x_low.
      xWord: add(mul(add(tileBlock, block), 64), mul(half, 16)),
    });
    blockHalf(inStep, { header, half, xWord }, total);
  });
  b.barrier();
}

/** Where a lane's share of its block is: staged header word, h, tile word of the block's x. */
interface LaneBlock {
  readonly header: Var<'u32'>;
  readonly half: Var<'u32'>;
  readonly xWord: Var<'u32'>;
}

/** Adds the lane's share of its block (chunks h and h + 2) into total. */
function blockHalf(b: GemvBuilder, { header, half, xWord }: LaneBlock, total: Var<'f32'>) {
  const [h0, h1, h2, h3] = b.loadVector('staging', header, vectorNames('head'));
  const { chunkWord, shift } = b.let({
    chunkWord: add(header, add(mul(half, 8), HEADER_WORDS)),
    shift: mul(half, 16),
  });
  const { d, dmin } = b.let({ d: unpackHalf(h0, 0), dmin: neg(unpackHalf(h0, 1)) });
  // Scale bytes 2h, 2h + 1 in bytes 0-1: 6 bits each for chunk h; nibbles of word 3 under the top
  // bits of words 1 (scales) and 2 (mins) for chunk h + 2. Scales are i32: they multiply dot sums.
  const { s1, s2, s3 } = b.let({
    s1: shr(h1, shift),
    s2: shr(h2, shift),
    s3: shr(h3, shift),
  });
  const tops = (word: Expr<'u32'>) => and(shr(word, 2), 0x3030);
  const factors = b.let({
    scalesLow: bitcast('i32', and(s1, 0x3f3f)),
    minsLow: and(s2, 0x3f3f),
    // The nibbles under the top bits, which are zero outside 0x3030.
    scalesHigh: bitcast('i32', bitSelect(0x0f0f, s3, tops(s1))),
    minsHigh: bitSelect(0x0f0f, shr(s3, 4), tops(s2)),
  });
  const chunks = [
    { scales: factors.scalesLow, mins: factors.minsLow },
    { scales: factors.scalesHigh, mins: factors.minsHigh },
  ];
  chunks.forEach((factor, chunk) => {
    const { quants, offsets } = chunkTerms(b, { chunkWord, xWord }, chunk, factor);
    b.assign(total, fma(d, quants, fma(dmin, offsets, total)));
  });
}

/**
 * Chunk h (`chunk` 0) or h + 2 (1) of the lane, staged from `chunkWord`, its x from tile word
 * `xWord`: Σ scale · x scale · dot sum over its two sub-blocks (`quants`) and Σ min · x sum
 * (`offsets`).
 */
function chunkTerms(
  b: GemvBuilder,
  { chunkWord, xWord }: { readonly chunkWord: Var<'u32'>; readonly xWord: Var<'u32'> },
  chunk: number,
  { scales, mins }: { readonly scales: Var<'i32'>; readonly mins: Var<'u32'> },
) {
  // Per qs vector: its low nibbles meet 4 x words of sub-block 2c's run (tile words xWord +
  // 32·chunk…), its high nibbles those of 2c + 1 (8 words on), x's high and low halves in separate
  // sums; few registers stay live.
  const sums: Var<'i32'>[] = [];
  for (const k of [0, 4]) {
    const qs = b.loadVector(
      'staging',
      add(chunkWord, 16 * chunk + k),
      vectorNames(`qs${chunk}${k}_`),
    );
    for (const high of [0, 1]) {
      const at = add(xWord, 32 * chunk + 8 * high + k);
      const xh = b.loadVector('x_high', at, vectorNames(`xh${chunk}${high}${k}_`));
      const xl = b.loadVector('x_low', at, vectorNames(`xl${chunk}${high}${k}_`));
      qs.forEach((word, j) => {
        const q = b.let(
          `q${chunk}${high}_${k + j}`,
          and(high === 0 ? word : shr(word, 4), 0x0f0f0f0f),
        );
        [xh[j]!, xl[j]!].forEach((x, part) => {
          const slot = 2 * high + part;
          const sum = sums[slot];
          if (sum === undefined) sums[slot] = b.let(`dot${chunk}_${slot}`, dot4I8(q, x, 0));
          else b.assign(sum, dot4I8(q, x, sum));
        });
      });
    }
  }
  const [high0, low0, high1, low1] = sums as [Var<'i32'>, Var<'i32'>, Var<'i32'>, Var<'i32'>];
  const dot0 = add(mul(high0, 256), low0);
  const dot1 = add(mul(high1, 256), low1);
  // x_scale and x_sum entries of the lane's first value: one per 32 values, one per 8.
  const scaleIndex = b.let(`x_scale_at${chunk}`, shr(xWord, 3));
  const sumIndex = b.let(`x_sum_at${chunk}`, shr(xWord, 1));
  const [scale0, scale1] = b.loadVector('x_scale', add(scaleIndex, 4 * chunk), [
    `x_scale${chunk}0`,
    `x_scale${chunk}1`,
  ]);
  const [sum0, sum1] = [0, 4].map((k) => {
    const s = b.loadVector(
      'x_sum',
      add(sumIndex, 16 * chunk + k),
      vectorNames(`x_sum${chunk}${k}_`),
    );
    return b.let(`x_total${chunk}${k}`, add(add(s[0], s[1]), add(s[2], s[3])));
  }) as [Var<'f32'>, Var<'f32'>];
  // Each sub-block's i32 sum times its scale (< 2^31), then its x scale; mins meet x sums.
  const weighted = (scale: Expr<'i32'>, dot: Expr<'i32'>) => convert('f32', mul(scale, dot));
  return {
    quants: fma(
      weighted(shr(scales, 8), dot1),
      scale1,
      mul(weighted(and(scales, 255), dot0), scale0),
    ),
    offsets: fma(convert('f32', shr(mins, 8)), sum1, mul(convert('f32', and(mins, 255)), sum0)),
  };
}

/** Catalog kernel `q4k-gemv` (`n_in` a multiple of 256). */
export const q4kGemv = gemvKernel(
  {
    id: 'q4k-gemv',
    semanticVersion: 2,
    type: 'q4_K',
    blocksPerStep: STEP_BLOCKS,
    stagingWords: STAGING_WORDS,
    step,
  },
  'in native GGUF Q4_K blocks',
  { offsetHeadroom: 4 * SECTOR_WORDS, generateWeights: randomQ4kWords },
);
