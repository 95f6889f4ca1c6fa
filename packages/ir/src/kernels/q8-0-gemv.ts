import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import {
  add,
  and,
  convert,
  div,
  dot4I8,
  fma,
  funnelShiftRight,
  gt,
  lt,
  min,
  mul,
  ne,
  select,
  shl,
  shr,
  sub,
  unpackHalf,
} from '../expressions.js';
import { QUANT_FORMATS, quantize } from '../quant/formats.js';
import { packWords } from '../quant/words.js';
import { fillUniform } from './random.js';
import { SECTOR_WORDS } from './gemv-interface.js';
import {
  rowsGemvKernel,
  X_QUANT_GROUP_WORDS,
  type RowStep,
  type RowsBuilder,
} from './gemv-rows.js';
import { vectorNames } from './locals.js';

const { blockBytes: BLOCK_BYTES } = QUANT_FORMATS.q8_0;
/** Blocks a warp takes a step: one a lane, 1088 bytes, a whole number of 16-byte vectors. */
const STEP_BLOCKS = WARP_SIZE;
const STEP_WORDS = (STEP_BLOCKS * BLOCK_BYTES) / 4;
/** Words of the window after its 2-word shift: the block's from the one holding d. */
const SHIFTED_WORDS = 9;

// Bandwidth plan: a warp streams two rows, 32 blocks (1088 bytes) of each a step, one block a lane.
// A block is 34 bytes, so it starts 2·l bytes (mod 16) into the 16-byte vector holding it: lane l
// loads the three aligned vectors covering it (its window; 1088 is 68 vectors, so its offset in
// the window is the same every step) and shifts the window by whole words with selects, then by a
// half word with a funnel shift, to get d and 8 quant words. A load instruction touches 32 sectors
// (8 wavefronts), 24 a row-step against 8.5 for the bytes alone; 4-byte loads at a 34-byte lane
// stride would take 81. Its group's x (16 x_high, x_low words, 64 bytes: 4 vector loads) and scale
// serve both rows. All of a step's loads are issued before any is used, every index a pointer
// carried from step to step. The quants meet x in 16 dot4I8; the block adds d·s·(256·Σq·h + Σq·l).
// The last step's lanes past the row load its last block again and add nothing. The matrix's last
// vector may be partial (its byte count need not be a multiple of 16): a window reaching it reads
// its words from copies loaded once, never past the buffer.

/** Where a lane's block of a row lies in its window, the same every step. */
interface RowPhase {
  /** The window's next and last-block first words (a vector's). */
  readonly next: Var<'u32'>;
  readonly last: Var<'u32'>;
  /** Whole words to shift by: 1 and 2. */
  readonly byOne: Var<'bool'>;
  readonly byTwo: Var<'bool'>;
  /** d is the high half of its word (its quants start on the next word), and its shift. */
  readonly high: Var<'bool'>;
  readonly dShift: Var<'u32'>;
}

/** The matrix's words and its last whole vector (its first word), which up to 3 words follow. */
interface MatrixEnd {
  readonly words: Var<'u32'>;
  readonly lastVector: Var<'u32'>;
}

// A block is one 32-value x group, so the row's block count is n_in / 32, the scaffold's sumBase.
function row({ b, rows, lane, sumBase: blocks }: RowStep): void {
  const nOut = b.param('n_out');
  const { words } = b.let({ words: shr(add(mul(mul(nOut, blocks), BLOCK_BYTES), 3), 2) });
  const { lastVector } = b.let({ lastVector: sub(shl(shr(words, 2), 2), 4) });
  const { lastBlock } = b.let({ lastBlock: sub(blocks, 1) });
  const vectorOf = (byte: Expr<'u32'>) => shl(shr(byte, 4), 2);
  const phases = rows.map(({ row: index }, r): RowPhase => {
    const rowByte = b.let(`row_byte${r}`, mul(mul(index, blocks), BLOCK_BYTES));
    const first = b.let(`first_byte${r}`, add(rowByte, mul(lane, BLOCK_BYTES)));
    const offset = b.let(`offset${r}`, and(first, 15));
    return {
      next: b.let(`next_window${r}`, vectorOf(first)),
      last: b.let(`last_window${r}`, vectorOf(add(rowByte, mul(lastBlock, BLOCK_BYTES)))),
      byOne: b.let(`by_one${r}`, ne(and(offset, 4), 0)),
      byTwo: b.let(`by_two${r}`, ne(and(offset, 8), 0)),
      high: b.let(`d_high${r}`, ne(and(offset, 2), 0)),
      dShift: b.let(`d_shift${r}`, mul(and(offset, 2), 8)),
    };
  });
  // A warp whose first row is past n_out has nothing to load (its totals stay 0).
  b.if(rows[0]!.live, (live) =>
    rowSteps(live, rows, { blocks, lastBlock }, phases, { words, lastVector }),
  );
}

/**
 * The row's steps, one loop: in the last, lanes past the row's blocks read the last block (one
 * request with its lane's) and add nothing. One copy of the step keeps the WGSL small.
 */
function rowSteps(
  b: RowsBuilder,
  rows: RowStep['rows'],
  { blocks, lastBlock }: { readonly blocks: Var<'u32'>; readonly lastBlock: Var<'u32'> },
  phases: readonly RowPhase[],
  end: MatrixEnd,
): void {
  const { block } = b.let({ block: b.laneId() });
  const { xNext, xLast } = b.let({
    xNext: mul(block, X_QUANT_GROUP_WORDS),
    xLast: mul(lastBlock, X_QUANT_GROUP_WORDS),
  });
  const { steps } = b.let({ steps: div(add(blocks, STEP_BLOCKS - 1), STEP_BLOCKS) });
  b.for('step', { start: 0, end: steps }, (s) => {
    const { inRow } = s.let({ inRow: lt(block, blocks) });
    const { xGroup: group, xWord } = s.let({
      xGroup: select(inRow, block, lastBlock),
      xWord: select(inRow, xNext, xLast),
    });
    const windows = phases.map((phase, r) =>
      s.let(`window${r}`, select(inRow, phase.next, phase.last)),
    );
    step(s, rows, phases, end, { group, xWord, windows, inRow });
    for (const phase of phases) s.assign(phase.next, add(phase.next, STEP_WORDS));
    s.assign(xNext, add(xNext, STEP_BLOCKS * X_QUANT_GROUP_WORDS));
    s.assign(block, add(block, STEP_BLOCKS));
  });
}

/** A step's loads, all issued before any is used, then each row's block into its total. */
function step(
  s: RowsBuilder,
  rows: RowStep['rows'],
  phases: readonly RowPhase[],
  { words, lastVector }: MatrixEnd,
  at: {
    readonly group: Var<'u32'>;
    readonly xWord: Var<'u32'>;
    readonly windows: readonly Var<'u32'>[];
    readonly inRow: Var<'bool'>;
  },
): void {
  // The third vector of a window at the matrix's end is clamped to the last whole one (its words
  // then come from scalar loads).
  const thirds = at.windows.map((window, r) => s.let(`third${r}`, min(add(window, 8), lastVector)));
  // A lane's window: the three 16-byte vectors holding its block wherever it starts. Row 0 is live
  // (the caller checks); a later row past n_out reads the last row (its pointer is clamped), the
  // same sectors as row 0's from L1, and adds nothing.
  const w = at.windows.map((window, r) =>
    [window, add(window, 4), thirds[r]!].flatMap((index, k) =>
      s.loadVector('w', index, vectorNames(`w${r}${k}_`)),
    ),
  );
  const [high, low] = [0, 8].map((part) =>
    [0, 4].flatMap(
      (k) =>
      s.loadVector('x_quant', add(at.xWord, part + k), vectorNames(`x${part === 0 ? 'h' : 'l'}${k}_`)), // prettier-ignore
    ),
  ) as [Var<'u32'>[], Var<'u32'>[]];
  const scale = s.let('x_scale', s.load('x_factors', at.group));
  rows.forEach(({ total, live }, r) => {
    s.if(and(live, at.inRow), (inside) => {
      const tail = [8, 9, 10].map((i) => inside.let(`tail${r}_${i}`, w[r]![i]!));
      // Only the matrix's last block can reach past its last whole vector.
      inside.if(gt(add(at.windows[r]!, 8), lastVector), (end) => {
        tail.forEach((word, i) =>
          end.assign(word, end.load('w', min(add(lastVector, 4 + i), sub(words, 1)))),
        );
      });
      const window = w[r]!.map((word, i) => (i >= 8 && i <= 10 ? tail[i - 8]! : word));
      blockDot(inside, `${r}`, { window, high, low, scale }, phases[r]!, total);
    });
  });
}

/** Adds one row's block (the lane's window of it) times its group of x into total. */
function blockDot(
  b: RowsBuilder,
  tag: string,
  {
    window,
    high,
    low,
    scale,
  }: {
    readonly window: readonly Var<'u32'>[];
    readonly high: readonly Var<'u32'>[];
    readonly low: readonly Var<'u32'>[];
    readonly scale: Var<'f32'>;
  },
  phase: RowPhase,
  total: Var<'f32'>,
): void {
  // Word i of the block from the one holding d: window word i + 2·byTwo + byOne.
  const byOne = Array.from({ length: SHIFTED_WORDS + 2 }, (_, i) =>
    b.let(`one${tag}_${i}`, select(phase.byOne, window[i + 1]!, window[i]!)),
  );
  const shifted = Array.from({ length: SHIFTED_WORDS }, (_, i) =>
    b.let(`shifted${tag}_${i}`, select(phase.byTwo, byOne[i + 2]!, byOne[i]!)),
  );
  const d = b.let(`d${tag}`, unpackHalf(shr(shifted[0]!, phase.dShift), 0));
  let sumHigh: Expr<'i32'> | undefined;
  let sumLow: Expr<'i32'> | undefined;
  for (let j = 0; j < 8; j++) {
    // Quants 4j..4j + 3: the next word when d is its word's high half, else straddling two.
    const aligned = shifted[j + 1]!;
    const straddling = funnelShiftRight(shifted[j]!, aligned, 16);
    const quant = b.let(`quant${tag}_${j}`, select(phase.high, aligned, straddling));
    sumHigh = b.let(`sum_high${tag}_${j}`, dot4I8(quant, high[j]!, sumHigh ?? 0));
    sumLow = b.let(`sum_low${tag}_${j}`, dot4I8(quant, low[j]!, sumLow ?? 0));
  }
  const dot = convert('f32', add(mul(sumHigh!, 256), sumLow!));
  b.assign(total, fma(mul(d, scale), dot, total));
}

/** Catalog kernel `q8_0-gemv` (`n_in` a multiple of 32). */
export const q8_0Gemv = rowsGemvKernel(
  { id: 'q8_0-gemv', semanticVersion: 3, type: 'q8_0', row, xSums: false },
  'in native GGUF Q8_0 blocks',
  {
    offsetHeadroom: 4 * SECTOR_WORDS,
    generateWeights: (nOut, nIn, rng, magnitude) => {
      const values = fillUniform(new Float32Array(nOut * nIn), rng, magnitude);
      return packWords(quantize('q8_0', values, nOut, nIn));
    },
  },
);
