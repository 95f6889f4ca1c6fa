import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { add, and, bitcast, convert, fma, lt, min, mul, or } from '../expressions.js';
import { shl, shr, sub, unpackHalf } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { dot4I8 } from './dot4.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { SECTOR_WORDS, gemvKernel, type GemvBuilder, type GemvStep } from './gemv-interface.js';
import { vectorNames } from './locals.js';
import { stageWords } from './staging.js';

const { blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Blocks a warp takes a step: 8 lanes a block. */
const STEP_BLOCKS = WARP_SIZE / 8;
/**
 * Staged words a step: the step's 4 blocks (840 bytes) from up to 30 bytes into a sector, plus the
 * word after a block's last realigned one, rounded up to whole 32-lane loads: 7 a lane.
 */
const STAGING_WORDS = 7 * WARP_SIZE;
const LOW_NIBBLES = 0x0f0f0f0f;
/** Bits 4-5 of each byte: where a value's two qh bits go. */
const HIGH_BITS = 0x30303030;

// Bandwidth plan: a step is 4 consecutive 210-byte blocks of a row, 8 lanes a block. The warp
// stages the step's bytes from the sector holding its first (128-byte requests, whole sectors);
// odd blocks start 2 bytes into a word, so each lane realigns its words with one shift for all.
// Q6_K value 128n + 32j + l (half n, l < 32) is ql[64n + 32(j&1) + l] nibble j>>1, qh[32n + l]
// bits 2j..2j+1, times d·sc[8n + 2j + l/16]. Lane (n, jj, u) takes j = jj and jj + 2 (one ql
// chunk's two nibbles) at l = 16u..16u+15: 4 ql, 4 qh words, two scales and 4-word-aligned x, so
// each (lane, j) is 16 values, 4 quant words in 8 dot4I8. The -32 offset is -32·Σx (exact x_sum).

/** The lane's fixed offsets: its block, ql/qh/scale words in the block, and x tile indices. */
function laneSetup(b: GemvBuilder, lane: Var<'u32'>) {
  const { block, half, pair, sixteen } = b.let({
    block: shr(lane, 3),
    half: and(shr(lane, 2), 1),
    pair: and(shr(lane, 1), 1),
    sixteen: and(lane, 1),
  });
  return b.let({
    blockBytes: mul(block, BLOCK_BYTES),
    qlWord: add(add(shl(half, 4), shl(pair, 3)), shl(sixteen, 2)),
    qhWord: add(add(32, shl(half, 3)), shl(sixteen, 2)),
    // Scale 8n + 2jj + u is byte 192 + 8n + 2jj + u; that of j = jj + 2 four bytes later.
    scaleByte: add(add(192, shl(half, 3)), add(shl(pair, 1), sixteen)),
    qhUp: sub(4, shl(pair, 1)),
    qhDown: shl(pair, 1),
    xWordLane: add(add(shl(block, 6), shl(half, 5)), add(shl(pair, 3), shl(sixteen, 2))),
    xGroupLane: add(add(shl(block, 3), shl(half, 2)), pair),
    xSumLane: add(add(shl(block, 5), shl(half, 4)), add(shl(pair, 2), shl(sixteen, 1))),
  });
}
type Lanes = ReturnType<typeof laneSetup>;

function step(context: GemvStep<Lanes>) {
  const { b, row, lane, blocks, rowBlock, blocksLeft, stagingBase } = context;
  // The step's first byte in W, and the staged words: from its sector to the step's last byte.
  const { stepByte, stepBlocks } = b.let({
    stepByte: mul(add(mul(row, blocks), rowBlock), BLOCK_BYTES),
    stepBlocks: min(blocksLeft, STEP_BLOCKS),
  });
  const { sectorWord, lastWord } = b.let({
    sectorWord: shl(shr(stepByte, 5), 3),
    lastWord: shr(sub(add(stepByte, mul(stepBlocks, BLOCK_BYTES)), 1), 2),
  });
  const loads = STAGING_WORDS / WARP_SIZE;
  stageWords(b, { sectorWord, lastWord, stagingBase, lane, loads });
  // Lanes past the step's blocks skip it.
  b.if(lt(lane, shl(stepBlocks, 3)), (block) => blockStep(context, block, stepByte));
  b.barrier();
}

/** The lane's 32 values of its block: staged words realigned, decoded and met with x. */
function blockStep(context: GemvStep<Lanes>, b: GemvBuilder, stepByte: Var<'u32'>) {
  const { total, lanes, tileBlock, stagingBase } = context;
  // The block starts `start` bytes into the staged words; `odd` (0 or 2) bytes into a word.
  const { start } = b.let({ start: add(and(stepByte, 31), lanes.blockBytes) });
  const { word, odd } = b.let({ word: add(stagingBase, shr(start, 2)), odd: and(start, 2) });
  // Realigned word i = raw i >> 16 | raw i+1 << 16 when odd, raw i otherwise (by multiplying).
  const { shift, carry } = b.let({ shift: shl(odd, 3), carry: shl(odd, 15) });
  const words = (name: string, offset: Var<'u32'>) => {
    const at = b.let(`${name}_at`, add(word, offset));
    const raw = [0, 1, 2, 3, 4].map((i) =>
      b.let(`${name}_raw${i}`, b.load('staging', i === 0 ? at : add(at, i))),
    );
    return [0, 1, 2, 3].map((i) =>
      b.let(`${name}${i}`, or(shr(raw[i]!, shift), mul(raw[i + 1]!, carry))),
    );
  };
  const ql = words('ql', lanes.qlWord);
  const qh = words('qh', lanes.qhWord);
  // d: f16 at byte 208 of the block.
  const dWord = b.load('staging', add(word, 52));
  const { d } = b.let({ d: unpackHalf(shr(dWord, shift), 0) });
  // The scale pair (2 bytes at an even offset) lies within one staged word.
  const { scaleAt } = b.let({ scaleAt: add(odd, lanes.scaleByte) });
  const { scaleWord, scaleShift } = b.let({
    scaleWord: add(word, shr(scaleAt, 2)),
    scaleShift: sub(24, shl(and(scaleAt, 3), 3)),
  });
  const { xWordAt, xScaleAt, xSumAt } = b.let({
    xWordAt: add(shl(tileBlock, 6), lanes.xWordLane),
    xScaleAt: add(shl(tileBlock, 3), lanes.xGroupLane),
    xSumAt: add(shl(tileBlock, 5), lanes.xSumLane),
  });
  const terms = [0, 1].map((high) => {
    // j = jj + 2·high: ql nibble `high`, qh bits 2j..2j+1 moved to bits 4-5.
    const quants = [0, 1, 2, 3].map((i) => {
      const nibble = high === 0 ? ql[i]! : shr(ql[i]!, 4);
      const bits = high === 0 ? shl(qh[i]!, lanes.qhUp) : shr(qh[i]!, lanes.qhDown);
      return b.let(`q${high}_${i}`, or(and(nibble, LOW_NIBBLES), and(bits, HIGH_BITS)));
    });
    const xAt = high === 0 ? xWordAt : add(xWordAt, 16);
    const xh = b.loadVector('x_high', xAt, vectorNames(`xh${high}_`));
    const xl = b.loadVector('x_low', xAt, vectorNames(`xl${high}_`));
    // One chain per x half: Σ q·h first, then Σ q·l onto 256 times it.
    const chain = (x: readonly Expr<'u32'>[], start: Expr<'i32'> | number) =>
      quants
        .slice(1)
        .reduce((sum, q, i) => dot4I8(q, x[i + 1]!, sum), dot4I8(quants[0]!, x[0]!, start));
    const sumHigh = b.let(`dot_high${high}`, chain(xh, 0));
    const dot = chain(xl, shl(sumHigh, 8));
    const scaleWordJ = high === 0 ? scaleWord : add(scaleWord, 1);
    const scaleByte = shl(b.load('staging', scaleWordJ), scaleShift);
    const scale = convert('f32', shr(bitcast('i32', scaleByte), 24));
    const xScale = b.load('x_scale', high === 0 ? xScaleAt : add(xScaleAt, 2));
    const sumAt = high === 0 ? xSumAt : add(xSumAt, 8);
    const xSumPair = add(b.load('x_sum', sumAt), b.load('x_sum', add(xSumAt, 8 * high + 1)));
    // Σ (q - 32)·x ≈ s·(256·Σq·h + Σq·l) - 32·Σx.
    const exact = fma(xScale, convert('f32', dot), mul(xSumPair, -32));
    return b.let(`term${high}`, mul(scale, exact));
  });
  b.assign(total, fma(d, add(terms[0]!, terms[1]!), total));
}

/** Catalog kernel `q6k-gemv` (`n_in` a multiple of 256). */
export const q6kGemv = gemvKernel(
  {
    id: 'q6k-gemv',
    semanticVersion: 2,
    type: 'q6_K',
    blocksPerStep: STEP_BLOCKS,
    stagingWords: STAGING_WORDS,
    laneSetup,
    step,
  },
  'in native GGUF Q6_K blocks',
  {
    offsetHeadroom: 4 * SECTOR_WORDS,
    // Random blocks: quantizing 8M values is slow; random bytes reach every value and scale.
    generateWeights: (...shape) => packWords(randomQ6kBlocks(...shape)),
  },
);
