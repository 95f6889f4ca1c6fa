import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import {
  add,
  and,
  bitcast,
  bitSelect,
  convert,
  dot4I8,
  eq,
  fma,
  lt,
  min,
  mul,
} from '../expressions.js';
import { funnelShiftRight, shl, shr, sub, unpackHalf, xor } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { SECTOR_WORDS, gemvKernel, type GemvBuilder, type GemvStep } from './gemv-interface.js';
import { vectorNames } from './locals.js';
import { stageWords } from './staging.js';

const { blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Lanes a block: each takes one half (128 values) at l = 16u..16u+15, all four j. */
const BLOCK_LANES = 4;
/** Blocks a warp takes a step. */
const STEP_BLOCKS = WARP_SIZE / BLOCK_LANES;
/**
 * Staged words a step: the step's 8 blocks (1680 bytes) from up to 30 bytes into a sector, plus
 * the word after a block's last realigned one, rounded up to whole 32-lane loads: 14 a lane.
 */
const STAGING_WORDS = 14 * WARP_SIZE;
/** Bytes of 4·(q − 32): the ql nibble at bits 2-5 (these), the 2 qh bits at bits 6-7. */
const LOW_BITS = 0x3c3c3c3c;
/** The qh parts j = 0, 2 (bits 0-1, 4-5 of each byte) and j = 1, 3 (bits 2-3, 6-7). */
const [EVEN_PARTS, ODD_PARTS] = [0x33333333, 0xcccccccc];
/** Flips each 2-bit qh part h to h ^ 2, so that at bits 6-7 of a byte it reads 64·(h − 2). */
const HIGH_FLIP = 0xaaaaaaaa;

// Bandwidth plan: a step is 8 consecutive 210-byte blocks of a row, 4 lanes a block. The warp
// stages the step's bytes from the sector holding its first (128-byte requests, whole sectors);
// odd blocks start 2 bytes into a word, so each lane realigns its words with one shift for all.
// Q6_K value 128n + 32j + l (half n, l < 32) is ql[64n + 32(j&1) + l] nibble j>>1, qh[32n + l]
// bits 2j..2j+1, times d·sc[8n + 2j + l/16]. Lane (n, u) takes l = 16u..16u+15 of half n for all
// four j: 4 words each of two ql chunks and of qh, 4 scales from 8 bytes; each j's 16 values are
// 4 words of bytes 4·(q − 32) = 4·ql + 64·(qh − 2) (int8, no carry between bytes, as in
// q6k-soa-gemv) against 4-word-aligned x in 8 dot4I8; d / 4 undoes the 4.

/** The lane's fixed offsets: its block, ql/qh/scale words in the block, and x tile indices. */
function laneSetup(b: GemvBuilder, lane: Var<'u32'>) {
  const { block, half, sixteen } = b.let({
    block: shr(lane, 2),
    half: and(shr(lane, 1), 1),
    sixteen: and(lane, 1),
  });
  return b.let({
    blockBytes: mul(block, BLOCK_BYTES),
    // Few lane constants (registers are tight on sm_80): the scale word and x indices derive.
    qlWord: add(shl(half, 4), shl(sixteen, 2)),
    qhWord: add(add(32, shl(half, 3)), shl(sixteen, 2)),
    // Scale 8n + 2j + u: byte u (j even) or 2 + u (j odd) of realigned scale word j >> 1.
    scaleShift: sub(24, shl(sixteen, 3)),
    xWordLane: add(add(shl(block, 6), shl(half, 5)), shl(sixteen, 2)),
  });
}
type Lanes = ReturnType<typeof laneSetup>;

function step(context: GemvStep<Lanes>) {
  const { b, row, live, lane, blocks, rowBlock, blocksLeft, stagingBase } = context;
  // The step's first byte in W, and the staged words: from its sector to the step's last byte.
  const { stepByte, stepBlocks } = b.let({
    stepByte: mul(add(mul(row, blocks), rowBlock), BLOCK_BYTES),
    stepBlocks: min(blocksLeft, STEP_BLOCKS),
  });
  const { sectorWord, firstWord, lastWord } = b.let({
    sectorWord: shl(shr(stepByte, 5), 3),
    firstWord: shr(stepByte, 2),
    lastWord: shr(sub(add(stepByte, mul(stepBlocks, BLOCK_BYTES)), 1), 2),
  });
  // A full step needs 420 words from at most 7 into its sector: loads 0 to 12 stay inside it.
  const full = eq(stepBlocks, STEP_BLOCKS);
  const loads = STAGING_WORDS / WARP_SIZE;
  const span = { sectorWord, firstWord, lastWord, stagingBase, lane, live, loads };
  stageWords(b, { ...span, full, unguarded: 13 });
  // Lanes past the step's blocks skip it, as does a warp past the last row.
  const active = and(live, lt(lane, shl(stepBlocks, 2)));
  b.if(active, (block) => blockStep(context, block, stepByte));
  b.barrier();
}

/** The lane's 64 values of its block: staged words realigned, decoded and met with x. */
function blockStep(context: GemvStep<Lanes>, b: GemvBuilder, stepByte: Var<'u32'>) {
  const { total, lanes, tileBlock, stagingBase } = context;
  // The block starts `start` bytes into the staged words; `odd` (0 or 2) bytes into a word.
  const { start } = b.let({ start: add(and(stepByte, 31), lanes.blockBytes) });
  const { word, odd } = b.let({ word: add(stagingBase, shr(start, 2)), odd: and(start, 2) });
  // Realigned word i: raw words i, i + 1 funnel-shifted right by 0 or 16 bits.
  const { shift } = b.let({ shift: shl(odd, 3) });
  const staged = (name: string, at: Expr<'u32'>, count: number, from = 0) => {
    const base = at.op === 'var' ? at : b.let(`${name}_at`, at);
    const raw = Array.from({ length: count + 1 }, (_, i) =>
      b.let(`${name}_raw${i}`, b.load('staging', i + from === 0 ? base : add(base, i + from))),
    );
    return Array.from({ length: count }, (_, i) => funnelShiftRight(raw[i]!, raw[i + 1]!, shift));
  };
  const words = (name: string, at: Expr<'u32'>, from = 0) =>
    staged(name, at, 4, from).map((word, i) => b.let(`${name}${i}`, word));
  const qh = staged('qh', add(word, lanes.qhWord), 4).map((word, i) =>
    b.let(`qh${i}`, xor(word, HIGH_FLIP)),
  );
  // The 8 scale bytes of the half, as i32 words (scales are int8).
  // Scale bytes 192 + 8n..: word 48 + 2n, and 2n = qlWord >> 3.
  const scales = staged('sc', add(word, shr(lanes.qlWord, 3)), 2, 48).map((word, i) =>
    b.let(`sc${i}`, bitcast('i32', word)),
  );
  // d: f16 at byte 208 of the block.
  const dWord = b.load('staging', add(word, 52));
  const { d } = b.let({ d: mul(unpackHalf(shr(dWord, shift), 0), 0.25) });
  const { xWordAt } = b.let({ xWordAt: add(shl(tileBlock, 6), lanes.xWordLane) });
  const { xScaleAt, scaleShiftOdd } = b.let({
    scaleShiftOdd: sub(lanes.scaleShift, 16),
    xScaleAt: shr(xWordAt, 3), // group 8·block + 4n + j
  });
  const xScales = b.loadVector('x_scale', xScaleAt, vectorNames('x_scale'));
  let sum: Expr<'f32'> | undefined;
  // ql chunk j & 1 (realigned when first needed, to keep fewer words live), nibble j >> 1.
  let chunk: Var<'u32'>[] = [];
  // qh parts of j's parity: every other part cleared, so bits 0-1 of a byte shift in as 0.
  let parts: Var<'u32'>[] = [];
  const { qlAt } = b.let({ qlAt: add(word, lanes.qlWord) });
  for (const j of [0, 2, 1, 3]) {
    if (j === 0) chunk = words('qla', qlAt);
    if (j === 1) chunk = words('qlb', qlAt, 8);
    if (j < 2) {
      const [name, mask] = j === 0 ? ['qh_even', EVEN_PARTS] : ['qh_odd', ODD_PARTS];
      parts = qh.map((h, i) => b.let(`${name}${i}`, and(h, mask)));
    }
    // The nibble moves to bits 2-5, (flipped) qh part j to bits 6-7 over zeros at bits 0-1; the
    // other part of the parity lands at bits 2-3, where the nibble is selected instead.
    const quants = chunk.map((ql, i) => {
      const low = j < 2 ? shl(ql, 2) : shr(ql, 2);
      const high = j === 3 ? parts[i]! : shl(parts[i]!, 6 - 2 * j);
      return b.let(`q${j}_${i}`, bitSelect(LOW_BITS, low, high));
    });
    const xAt = j === 0 ? xWordAt : add(xWordAt, 8 * j);
    const xh = b.loadVector('x_high', xAt, vectorNames(`xh${j}_`));
    const xl = b.loadVector('x_low', xAt, vectorNames(`xl${j}_`));
    // One chain per x half: Σ q·h first, then Σ q·l onto 256 times it.
    const chain = (x: readonly Expr<'u32'>[], first: Expr<'i32'> | number) =>
      quants
        .slice(1)
        .reduce((acc, q, i) => dot4I8(q, x[i + 1]!, acc), dot4I8(quants[0]!, x[0]!, first));
    const dotHigh = b.let(`dot_high${j}`, chain(xh, 0));
    const dot = chain(xl, shl(dotHigh, 8));
    // Scale 8n + 2j + u, an int8.
    const scaleByte = shl(scales[j >> 1]!, j % 2 === 0 ? lanes.scaleShift : scaleShiftOdd);
    const scale = convert('f32', shr(scaleByte, 24));
    // Σ 4·(q - 32)·x ≈ s·(256·Σ q·h + Σ q·l), times the scale.
    const scaled = mul(scale, xScales[j]!);
    const dotF = convert('f32', dot);
    sum = b.let(`sum${j}`, sum === undefined ? mul(scaled, dotF) : fma(scaled, dotF, sum));
  }
  b.assign(total, fma(d, sum!, total));
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
