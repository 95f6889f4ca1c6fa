import type { Expr, VarExpr as Var } from '../body.js';
import {
  add,
  and,
  bitcast,
  bitSelect,
  convert,
  div,
  dot4I8,
  fma,
  lt,
  mul,
  or,
  shl,
  shr,
} from '../expressions.js';
import { select, sub, u32, unpackHalf, xor } from '../expressions.js';
import { QUANT_FORMATS } from '../quant/formats.js';
import { repack, unpack } from '../quant/repack.js';
import { packWords } from '../quant/words.js';
import { randomQ6kBlocks } from './gemv-catalog.js';
import { SECTOR_WORDS, gemvKernel, type GemvBuilder, type GemvStep } from './gemv-interface.js';
import { four, vectorNames } from './locals.js';

const { blockSize: BLOCK, blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q6_K;
/** Words per block of each repacked array: ql 128 bytes, qh 64, scales 16 (d is 2 bytes). */
const [QL_WORDS, QH_WORDS, SCALE_WORDS] = [32, 16, 4];
/** Blocks a warp takes a step: four lanes a block. */
const STEP_BLOCKS = 8;
/** Bytes of 4·(q − 32): the 4-bit low part at bits 2-5 (these), the 2-bit high part at bits 6-7. */
const LOW_BITS = 0x3c3c3c3c;
/** The high parts j = 0, 2 (bits 0-1, 4-5 of each byte) and j = 1, 3 (bits 2-3, 6-7). */
const [EVEN_PARTS, ODD_PARTS] = [0x33333333, 0xcccccccc];
/** Flips each 2-bit high part h to h ^ 2, so that at bits 6-7 of a byte it reads 64·(h − 2). */
const HIGH_FLIP = 0xaaaaaaaa;

// Bandwidth plan (layout in quant/LAYOUTS.md): a step is 8 consecutive blocks of a row; lane t
// takes block k = t/4, half n = (t/2) % 2 and l0 = 16·(t % 2) of it: 16-byte loads of ql[64n + l0
// ..+16] (values j = 0, 1 of the half), ql[64n + 32 + l0 ..] (j = 2, 3) and qh[32n + l0 ..], i.e.
// values 128n + 32j + l0 + 0..15 for j = 0..3. Every ql and qh byte is loaded once and each warp
// load is whole sectors (lane pairs fill one). The lane's scales sc[8n + l0/16 + 2j] lie in the
// block's scale words 2n, 2n + 1 (one 8-byte load); its d is half a word of the step's 4 d words.
// Decoding builds bytes 4·(q − 32) = 4·low + 64·(h − 2), int8 without a carry between bytes, so a
// group's dot products give Σ (q − 32)·x directly: per j, 4 words meet x_high and x_low in 8 dot4.

function laneSetup(b: GemvBuilder, lane: Var<'u32'>) {
  const { nb } = b.let({ nb: div(b.param('n_in'), BLOCK) });
  // Row stride 32·⌈210·nb/32⌉ bytes, in words; ql, qh, scales and d one after another.
  const { rowWords } = b.let({ rowWords: mul(div(add(mul(nb, BLOCK_BYTES), 31), 32), 8) });
  const { pairIndex, side, laneBlock } = b.let({
    pairIndex: shr(lane, 1), // 2k + n
    side: and(lane, 1), // l0 / 16
    laneBlock: shr(lane, 2),
  });
  const { subWords } = b.let({ subWords: mul(side, 4) });
  return {
    rowWords,
    laneBlock,
    ...b.let({
      qlLane: add(mul(pairIndex, 16), subWords),
      qhLane: add(add(mul(nb, QL_WORDS), mul(pairIndex, 8)), subWords),
      // Lane t loads scale word t of the step (word 2n + l0/16 of block k): each once.
      scaleLane: add(mul(nb, QL_WORDS + QH_WORDS), lane),
      evenLane: sub(lane, side),
      oddLane: or(lane, 1),
      // Lanes 0-3 load the step's 4 d words (blocks 2t, 2t + 1); the rest none (first block 2^32-1).
      dLane: add(mul(nb, QL_WORDS + QH_WORDS + SCALE_WORDS), lane),
      dFirstBlock: select(lt(lane, STEP_BLOCKS / 2), mul(lane, 2), 0xffffffff),
      dSource: shr(laneBlock, 1),
      dShift: mul(and(laneBlock, 1), 16),
      xLane: add(mul(pairIndex, 32), subWords),
      xScaleLane: mul(pairIndex, 4),
      // Moves scale byte l0/16 (j even) or l0/16 + 2 (j odd) of a scale word to the top byte.
      scaleShiftEven: sub(24, mul(side, 8)),
      scaleShiftOdd: sub(8, mul(side, 8)),
    }),
  };
}
type Lanes = ReturnType<typeof laneSetup>;

/**
 * The 4 words of 4·(q − 32) bytes of value group j from ql words `low` and the flipped qh words'
 * parts of j's parity (`parts`: the other parity cleared, so bits 0-1 of a byte shift in as 0).
 */
function groupWords(j: number, low: readonly Expr<'u32'>[], parts: readonly Expr<'u32'>[]) {
  // Low 4 bits: ql bits 0-3 (j < 2) or 4-7, to bits 2-5; high 2 bits 2j, 2j+1 to bits 6-7 (the
  // other part of the parity lands at bits 2-3, where the low part is selected instead).
  const lowPart = (word: Expr<'u32'>) => (j < 2 ? shl(word, 2) : shr(word, 2));
  const highPart = (word: Expr<'u32'>) => (j === 3 ? word : shl(word, 6 - 2 * j));
  return four((i) => bitSelect(LOW_BITS, lowPart(low[i]!), highPart(parts[i]!)));
}

/** The lane's scale words 2n, 2n + 1 and its block's d word: each loaded once, then shuffled. */
function meta(step: GemvStep<Lanes>, rowStart: Var<'u32'>, onBlock: Var<'bool'>) {
  const { b, lanes, live, rowBlock, blocksLeft } = step;
  const { scaleLane, evenLane, oddLane, dLane, dFirstBlock, dSource } = lanes;
  const { scaleOwn, dOwn } = b.let({ scaleOwn: u32(0), dOwn: u32(0) });
  b.if(onBlock, (load) => {
    const at = add(add(rowStart, mul(rowBlock, SCALE_WORDS)), scaleLane);
    load.assign(scaleOwn, load.load('w', at));
  });
  b.if(and(live, lt(dFirstBlock, blocksLeft)), (load) =>
    load.assign(dOwn, load.load('w', add(add(rowStart, shr(rowBlock, 1)), dLane))),
  );
  // Shuffles outside the guards: every lane takes part.
  const scales = [
    b.shuffle('idx', 'scales_even', scaleOwn, evenLane),
    b.shuffle('idx', 'scales_odd', scaleOwn, oddLane),
  ] as const;
  return { scales, dWord: b.shuffle('idx', 'd_pair', dOwn, dSource) };
}

function step(context: GemvStep<Lanes>) {
  const { b, total, row, live, lanes, rowBlock, tileBlock, blocksLeft } = context;
  const { rowWords, laneBlock, qlLane, qhLane, dShift } = lanes;
  const { xLane, xScaleLane, scaleShiftEven, scaleShiftOdd } = lanes;
  const { rowStart, onBlock } = b.let({
    rowStart: mul(row, rowWords),
    onBlock: and(live, lt(laneBlock, blocksLeft)),
  });
  const { scales, dWord } = meta(context, rowStart, onBlock);
  b.if(onBlock, (q) => {
    const { qlWord, qhWord } = q.let({
      qlWord: add(add(rowStart, mul(rowBlock, QL_WORDS)), qlLane),
      qhWord: add(add(rowStart, mul(rowBlock, QH_WORDS)), qhLane),
    });
    const lowA = q.loadVector('w', qlWord, vectorNames('ql_a'));
    const lowB = q.loadVector('w', add(qlWord, SECTOR_WORDS), vectorNames('ql_b'));
    const rawHigh = q.loadVector('w', qhWord, vectorNames('qh_raw'));
    const high = four((i) => q.let(`qh${i}`, xor(rawHigh[i], HIGH_FLIP)));
    const { xWord } = q.let({ xWord: add(mul(tileBlock, 64), xLane) });
    const xScale = q.loadVector('x_scale', add(mul(tileBlock, 8), xScaleLane), vectorNames('xs'));
    // Group j's Σ 4·(q − 32)·x in f32, times its scale: sc_j · x_scale · (256·Σ q·h + Σ q·l).
    const parity = (name: string, mask: number) =>
      four((i) => q.let(`${name}${i}`, and(high[i], mask)));
    let parts: readonly Var<'u32'>[] = [];
    const group = (j: number) => {
      // Odd parts replace the even ones once j = 0, 2 are done.
      if (j < 2) parts = j === 0 ? parity('qh_even', EVEN_PARTS) : parity('qh_odd', ODD_PARTS);
      const words = groupWords(j, j % 2 ? lowB : lowA, parts).map((w, i) => q.let(`q${j}_${i}`, w));
      const xAt = j === 0 ? xWord : add(xWord, 8 * j);
      const xHigh = q.loadVector('x_high', xAt, vectorNames(`xh${j}_`));
      const xLow = q.loadVector('x_low', xAt, vectorNames(`xl${j}_`));
      const sumHigh = words.reduce<Expr<'i32'> | number>((c, w, i) => dot4I8(w, xHigh[i]!, c), 0);
      const dotHigh = q.let(`dot_high${j}`, shl(sumHigh as Expr<'i32'>, 8));
      const dot = words.reduce<Expr<'i32'>>((c, w, i) => dot4I8(w, xLow[i]!, c), dotHigh);
      // sc int8: its byte moved to the top, then an arithmetic shift back.
      const top = shl(j < 2 ? scales[0] : scales[1], j % 2 ? scaleShiftOdd : scaleShiftEven);
      const sc = convert('f32', shr(bitcast('i32', top), 24));
      return [mul(sc, xScale[j]!), convert('f32', dot)] as const;
    };
    const { partial } = q.let({ partial: mul(...group(0)) });
    for (const j of [2, 1, 3]) q.assign(partial, fma(...group(j), partial));
    // d / 4: the bytes were 4·(q − 32).
    const dValue = unpackHalf(shr(dWord, dShift), 0);
    q.assign(total, fma(mul(dValue, 0.25), partial, total));
  });
}

/**
 * Catalog kernel `q6k-soa-gemv`: q6k-gemv's product on rows repacked by `repack` (so every load is
 * aligned; `weights.fromNative` converts GGUF rows); `n_in` must be a multiple of 256.
 */
export const q6kSoaGemv = gemvKernel(
  {
    id: 'q6k-soa-gemv',
    semanticVersion: 2,
    type: 'q6_K',
    blocksPerStep: STEP_BLOCKS,
    stagingWords: 0,
    laneSetup,
    step,
  },
  'of Q6_K blocks repacked structure-of-arrays',
  {
    offsetHeadroom: 4 * SECTOR_WORDS,
    // Rows of 32·⌈210·nb/32⌉ bytes (LAYOUTS.md); plain arithmetic, safe on bad shapes.
    layoutBytes: (nOut, nIn) => nOut * 32 * Math.ceil((BLOCK_BYTES * Math.floor(nIn / BLOCK)) / 32),
    toNative: (...rows) => unpack('q6_K', ...rows),
    fromNative: (...rows) => repack('q6_K', ...rows),
    // Random native blocks (see q6k-gemv), repacked.
    generateWeights: (nOut, nIn, ...rest) =>
      packWords(repack('q6_K', randomQ6kBlocks(nOut, nIn, ...rest), nOut, nIn)),
  },
);
