import { WARP_SIZE } from '../body.js';
import {
  add,
  and,
  convert,
  dot4I8,
  eq,
  fma,
  funnelShiftRight,
  i32,
  lt,
  min,
  mul,
} from '../expressions.js';
import { select, shr, sub, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS, quantize } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { fillUniform } from './random.js';
import { SECTOR_WORDS, gemvKernel, type GemvStep } from './gemv-interface.js';
import { four } from './locals.js';
import { stageWords } from './staging.js';

const { blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q8_0;
/** Blocks a warp takes a step: one a lane. */
const STEP_BLOCKS = WARP_SIZE;
/**
 * Staged words a step: the step's 32 blocks (1088 bytes) from up to 30 bytes into a sector, plus
 * the word after the last (the realigning read's), rounded up to whole 32-lane loads: 9 a lane.
 */
const STAGING_WORDS = 9 * WARP_SIZE;

// Bandwidth plan: a step is 32 consecutive blocks of a row, one a lane. Blocks are 34 bytes, so
// half start 2 bytes into a word: the warp stages the step's bytes from the sector holding its
// first (128-byte requests, whole sectors) and each lane realigns its block's 8 quant words from
// 9 staged ones with a funnel shift. A lane's 32 quants meet 8 x_high and 8 x_low words in 16
// dot4I8; the block's sum is d · s · (256·Σq·h + Σq·l).

function step({
  b,
  total,
  row,
  live,
  lane,
  blocks,
  rowBlock,
  tileBlock,
  blocksLeft,
  stagingBase,
}: GemvStep<undefined>) {
  // The step's first byte in W, and the staged words: from its sector to the step's last byte.
  const { stepByte, stepBlocks } = b.let({
    stepByte: mul(add(mul(row, blocks), rowBlock), BLOCK_BYTES),
    stepBlocks: min(blocksLeft, STEP_BLOCKS),
  });
  const { sectorWord, firstWord } = b.let({
    sectorWord: mul(shr(stepByte, 5), SECTOR_WORDS),
    firstWord: shr(stepByte, 2),
  });
  const lastWord = shr(sub(add(stepByte, mul(stepBlocks, BLOCK_BYTES)), 1), 2);
  // A full step needs at least 1088 / 4 = 272 words: the first 8 loads (256) stay inside it.
  const full = eq(stepBlocks, STEP_BLOCKS);
  const loads = STAGING_WORDS / WARP_SIZE;
  stageWords(b, {
    sectorWord,
    firstWord,
    lastWord,
    stagingBase,
    lane,
    live,
    loads,
    full,
    unguarded: 8,
  });
  b.if(and(live, lt(lane, stepBlocks)), (block) => {
    // The lane's block starts `start` bytes into the staged words; its quants 2 bytes later.
    const { start } = block.let({ start: add(and(stepByte, 31), mul(lane, BLOCK_BYTES)) });
    const { quantByte } = block.let({ quantByte: add(start, 2) });
    const { quants, shift } = block.let({
      quants: add(stagingBase, shr(quantByte, 2)),
      shift: mul(and(quantByte, 2), 8),
    });
    const { dIndex } = block.let({ dIndex: add(stagingBase, shr(start, 2)) });
    const dWord = block.load('staging', dIndex);
    // d is the word's low half when the quants start mid-word (shift 16), else its high half.
    const { d } = block.let({ d: unpackHalf(shr(dWord, sub(16, shift)), 0) });
    const raw = Array.from({ length: 9 }, (_, j) =>
      block.let(`raw${j}`, block.load('staging', j === 0 ? quants : add(quants, j))),
    );
    // Quant word j: bytes `shift / 8` on of raw j, then of raw j + 1 (nothing of it when aligned).
    // Raw 8 lies past an aligned last block's end, unstaged: word 7 is then raw 7 alone.
    const funnel = (j: number) => funnelShiftRight(raw[j]!, raw[j + 1]!, shift);
    const word = (j: number) => (j < 7 ? funnel(j) : select(eq(shift, 0), raw[j]!, funnel(j)));
    const { groupIndex } = block.let({ groupIndex: add(tileBlock, lane) });
    const { xWord } = block.let({ xWord: mul(groupIndex, 8) });
    // The group's 8 x_high (x_low) words: xh0..xh7 (xl0..xl7), two 4-word loads each.
    const xWords = (memory: 'x_high' | 'x_low', prefix: string) =>
      [0, 4].flatMap((k) =>
        block.loadVector(
          memory,
          k === 0 ? xWord : add(xWord, k),
          four((i) => `${prefix}${k + i}`),
        ),
      );
    const [high, low] = [xWords('x_high', 'xh'), xWords('x_low', 'xl')];
    const { sumHigh, sumLow } = block.let({ sumHigh: i32(0), sumLow: i32(0) });
    for (let j = 0; j < 8; j++) {
      const quant = block.let(`quant${j}`, word(j));
      block.assign(sumHigh, dot4I8(quant, high[j]!, sumHigh));
      block.assign(sumLow, dot4I8(quant, low[j]!, sumLow));
    }
    const dot = convert('f32', add(mul(sumHigh, 256), sumLow));
    const scale = block.load('x_scale', groupIndex);
    block.assign(total, fma(mul(d, scale), dot, total));
  });
  b.barrier();
}

/** Catalog kernel `q8_0-gemv` (`n_in` a multiple of 32). */
export const q8_0Gemv = gemvKernel(
  {
    id: 'q8_0-gemv',
    semanticVersion: 2,
    type: 'q8_0',
    blocksPerStep: STEP_BLOCKS,
    stagingWords: STAGING_WORDS,
    step,
  },
  'in native GGUF Q8_0 blocks',
  {
    offsetHeadroom: 4 * SECTOR_WORDS,
    generateWeights: (nOut, nIn, rng, magnitude) => {
      const values = fillUniform(new Float32Array(nOut * nIn), rng, magnitude);
      return packWords(quantize('q8_0', values, nOut, nIn));
    },
  },
);
