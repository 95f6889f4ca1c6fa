import { WARP_SIZE } from '../body.js';
import type { Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import type { BodyBuilder, DeclaredBy } from '../builder.js';
import type { Local, Value } from '../expression-methods.js';
import { and, f32, fma, max, min, unpackHalf } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import { GEMV_BINDINGS } from './gemv-interface.js';
import { hints, itemAt } from './tuples.js';

// Plan: a warp a row, workgroups striding over groups of rows. A row's words split into a head
// (up to its first sector boundary, at most 7 words), a body of 16-byte vectors in whole 512-byte
// warp loads from that boundary, and a tail (past the last 16-byte boundary, at most 3 words):
// lanes 0–7 take the head's words, lanes 8–10 the tail's, so each word is loaded once. The body
// runs in steps of `vectors` loads a lane (all of a step's W loads issued, then its x loads, then
// the FMAs), then a vector at a time. x comes in 16-byte loads where the row's x values are
// aligned (n_in a multiple of 4: every row), else one value at a time, each in its own copy of
// the body's loops.

/** Element types of the dense (unquantized) weights: f16 travels as u32 words of two halves. */
export type DenseType = 'f32' | 'f16';
/** W values a 4-byte word holds. */
export const VALUES_PER_WORD: Readonly<Record<DenseType, 1 | 2>> = { f32: 1, f16: 2 };
/** Words a lane loads at once: 16 bytes. */
const VECTOR = 4;
/** A sector's words: the body of a row starts at one so that each warp load is whole sectors. */
const SECTOR_WORDS = 8;
/** Most vector loads a lane keeps in flight before its FMAs (the `vectors` knob's bound). */
export const MAX_VECTORS = 4;

const [W, X, Y] = GEMV_BINDINGS.buffers;
/** The quantized gemvs' bindings, W f32 or (f16) u32 words. */
const denseInterface = (type: DenseType) =>
  ({ ...GEMV_BINDINGS, buffers: [{ ...W, element: type === 'f32' ? 'f32' : 'u32' }, X, Y], shared: [] }) as const; // prettier-ignore
type DenseBuilder = BodyBuilder<DeclaredBy<ReturnType<typeof denseInterface>>>;

/** What every accumulation of a row's words shares: its total, first word, whether x is aligned. */
// xVector: x loads 4 values at once (the row's x values start on a 16-byte boundary).
type Row = { readonly type: DenseType; readonly total: Local<'f32'>; readonly base: Local<'u32'>; readonly xVector: boolean }; // prettier-ignore

const isF32 = (word: Expr): word is Expr<'f32'> => word.type === 'f32';
/** W word `word` as f32 values: itself (f32) or its low then high half (f16). */
const wordValues = (word: Expr): Expr<'f32'>[] =>
  isF32(word) ? [word] : [unpackHalf(word, 0), unpackHalf(word, 1)];

/** The x values of `count` W words from word `first`: 16-byte loads when the row allows. */
function loadX(b: DenseBuilder, { type, base, xVector }: Row, first: Value<'u32'>, count: number) {
  const values = count * VALUES_PER_WORD[type];
  const column = b.let('column', first.sub(base).mul(VALUES_PER_WORD[type]));
  const xAt = (k: number) => (k === 0 ? column : column.add(k));
  return xVector && values >= VECTOR
    ? Array.from({ length: values / VECTOR }, (_, v) => b.loadVector('x', xAt(v * VECTOR), hints('xv'))).flat() // prettier-ignore
    : Array.from({ length: values }, (_, k) => b.memory.x.at(xAt(k)));
}

/** Adds W words `words` (the first at `first`) times their x values into the row's total. */
function accumulate(b: DenseBuilder, row: Row, first: Value<'u32'>, words: readonly Expr[]): void {
  const x = loadX(b, row, first, words.length);
  words.flatMap(wordValues).forEach((value, k) => b.assign(row.total, fma(value, itemAt(x, k), row.total))); // prettier-ignore
}

/** A lane's 16-byte W load at word `at`. */
const loadW = (b: DenseBuilder, at: Value<'u32'>) => b.loadVector('w', at, hints('w_word'));

/** Where a lane's body words lie: whole steps from `laneWord`, then single vectors. */
type Span = Record<'laneWord' | 'fullSteps' | 'restWord' | 'restEnd', Local<'u32'>> & { readonly stepWords: Value<'u32'> }; // prettier-ignore

/** A row's body: whole steps of `vectors` 16-byte loads a lane, then the rest a vector at a time. */
function bodyLoops(b: DenseBuilder, row: Row, { stepWords, ...span }: Span): void {
  const { laneWord, fullSteps, restWord, restEnd } = span;
  b.for('step', { start: 0, end: fullSteps }, (_, step) => {
    const stepWord = b.let('step_word', laneWord.add(step.mul(stepWords)));
    b.specialize('vectors', [1, 2, 3, MAX_VECTORS], (vectors) => {
      const at = (k: number) => (k === 0 ? stepWord : stepWord.add(k * VECTOR * WARP_SIZE));
      const w = Array.from({ length: vectors }, (_, k) => loadW(b, at(k)));
      const x = w.map((_, k) => loadX(b, row, at(k), VECTOR));
      w.forEach(
        (words, k) =>
        words.flatMap(wordValues).forEach((value, i) => b.assign(row.total, fma(value, itemAt(itemAt(x, k), i), row.total))), // prettier-ignore
      );
    });
  });
  b.for('word', { start: restWord, end: restEnd, step: VECTOR * WARP_SIZE }, (_, word) =>
    accumulate(b, row, word, loadW(b, word)),
  );
}

function denseBody(b: DenseBuilder, type: DenseType): void {
  const [nIn, nOut] = [b.param('n_in'), b.param('n_out')];
  const warps = b.schedule('workgroupSize').div(WARP_SIZE);
  const { groups, lane, rowWords } = b.let({
    groups: nOut.add(warps.sub(1)).div(warps),
    lane: b.laneId(),
    rowWords: type === 'f32' ? nIn : nIn.shr(1),
  });
  b.for('group', { start: b.workgroupId(), end: groups, step: b.numWorkgroups() }, (_, group) => {
    const { slot } = b.let({ slot: group.mul(warps).add(b.warpId()) });
    const { live, row, total } = b.let({
      live: slot.lt(nOut),
      row: slot.min(nOut.sub(1)),
      total: f32(0),
    });
    const { base } = b.let({ base: row.mul(rowWords) });
    const { end, xAligned } = b.let({
      end: base.add(rowWords),
      xAligned: row
        .mul(nIn)
        .and(VECTOR - 1)
        .eq(0),
    });
    const { head } = b.let({ head: min(and(base.add(SECTOR_WORDS - 1), ~(SECTOR_WORDS - 1) >>> 0), end) }); // prettier-ignore
    const { bodyEnd } = b.let({ bodyEnd: max(and(end, ~(VECTOR - 1) >>> 0), head) });
    // Head and tail: one word a lane.
    const inHead = lane.lt(SECTOR_WORDS);
    const { edgeWord } = b.let({ edgeWord: inHead.select(base.add(lane), bodyEnd.add(lane).sub(SECTOR_WORDS)) }); // prettier-ignore
    b.if(live.and(edgeWord.lt(inHead.select(head, end))), () => {
      const word = b.let('edge_w', b.memory.w.at(edgeWord));
      accumulate(b, { type, total, base, xVector: false }, edgeWord, [word]);
    });
    const stepWords = b.schedule('vectors').mul(VECTOR * WARP_SIZE);
    const { laneWord, fullSteps } = b.let({
      laneWord: head.add(lane.mul(VECTOR)),
      fullSteps: live.select(bodyEnd.sub(head).div(stepWords), 0),
    });
    const { restWord, restEnd } = b.let({
      restWord: laneWord.add(fullSteps.mul(stepWords)),
      restEnd: live.select(bodyEnd, 0),
    });
    const span = { stepWords, laneWord, fullSteps, restWord, restEnd };
    // The body's loops twice, so that neither tests x's alignment per vector.
    b.if(
      xAligned,
      () => bodyLoops(b, { type, total, base, xVector: true }, span),
      () => bodyLoops(b, { type, total, base, xVector: false }, span),
    );
    const sum = b.reduce('add', 'row_sum', total);
    b.if(live.and(lane.eq(0)), () => b.memory.y.store(slot, sum));
  });
}

/** The spec of `f32-gemv` or `f16-gemv`. */
export function denseGemvSpec(type: DenseType): KernelSpec {
  const id = `${type}-gemv`;
  const description = `y = W x, W [n_out][n_in] ${type === 'f32' ? 'f32' : 'f16 (u32 words of two halves)'} row-major, x and y f32; a warp per row, each W byte loaded once in 16-byte loads, f32 FMAs`;
  // At most 512 threads: a step's loads all in flight need more than the 64 registers a thread
  // gets at 1024 (ptxas spills from 672 on).
  const groupSizes = { min: 32, max: 512, multipleOf: 32 };
  const vectorBounds = { min: 1, max: MAX_VECTORS };
  return defineKernel(
    {
      ...{ id, semanticVersion: 1, entryPoint: id.replaceAll('-', '_'), description },
      ...denseInterface(type),
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup; each 32-lane warp streams its own row',
          default: 256,
          bounds: { ptx: groupSizes, wgsl: groupSizes },
        },
        {
          name: 'vectors',
          description: '16-byte W loads a lane issues before their FMAs (memory in flight)',
          // 64 bytes a lane in flight for f16 (its values need twice the x loads, fewer registers
          // each), 32 for f32: each the fastest on the H200 timing model at 4096-14336 rows.
          default: type === 'f16' ? 4 : 2,
          bounds: { ptx: vectorBounds, wgsl: vectorBounds },
        },
      ],
      launch: {
        workgroupSize: 'workgroupSize',
        // WebGPU caps a grid dimension at 65535 workgroups; more rows run as a grid-stride loop.
        grid: ['min(ceil_div(n_out, workgroupSize / 32), 65535)', '1', '1'],
      },
    },
    (b) => denseBody(b, type),
  );
}
