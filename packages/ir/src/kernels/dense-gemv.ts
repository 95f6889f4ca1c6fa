import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import {
  add,
  and,
  div,
  eq,
  f32,
  fma,
  lt,
  max,
  min,
  mul,
  select,
  shr,
  sub,
} from '../expressions.js';
import { unpackHalf } from '../expressions.js';
import type { KernelSpec } from '../spec.js';

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

function denseInterface(type: DenseType) {
  return {
    buffers: [
      { group: 0, binding: 0, name: 'w', element: type === 'f32' ? 'f32' : 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
    ],
    params: [
      { name: 'n_in', type: 'u32' },
      { name: 'n_out', type: 'u32' },
    ],
    shared: [],
  } as const; // checked by defineKernel
}
type DenseBuilder = BodyBuilder<DeclaredBy<ReturnType<typeof denseInterface>>>;

/** What every accumulation of a row's words shares. */
interface Row {
  readonly type: DenseType;
  readonly total: Var<'f32'>;
  /** The row's first W word. */
  readonly base: Var<'u32'>;
  /** Whether x loads 4 values at once (the row's x values start on a 16-byte boundary). */
  readonly xVector: boolean;
}

/** W word `word` as f32 values: itself (f32) or its low then high half (f16). */
function wordValues(type: DenseType, word: Expr): Expr<'f32'>[] {
  return type === 'f32' ? [word as Expr<'f32'>] : [unpackHalf(word, 0), unpackHalf(word, 1)];
}

/**
 * Adds W words `words` (consecutive, the first at `first`) times their x values into the row's
 * total: x in 16-byte loads when the row says so and there are 4 values or more, else one value
 * at a time. Locals are named from `prefix`.
 */
function accumulate(
  b: DenseBuilder,
  row: Row,
  prefix: string,
  first: Expr<'u32'>,
  words: readonly Expr[],
): void {
  const x = loadX(b, row, prefix, first, words.length);
  const values = words.flatMap((word) => wordValues(row.type, word));
  values.forEach((value, k) => b.assign(row.total, fma(value, x[k] ?? f32(0), row.total)));
}

/** The x values of `count` W words from word `first`: 16-byte loads when the row allows. */
function loadX(
  b: DenseBuilder,
  row: Row,
  prefix: string,
  first: Expr<'u32'>,
  count: number,
): Expr<'f32'>[] {
  const { type, base, xVector } = row;
  const values = count * VALUES_PER_WORD[type];
  const column = b.let(`${prefix}_column`, mul(sub(first, base), VALUES_PER_WORD[type]));
  const xAt = (k: number) => (k === 0 ? column : add(column, k));
  return xVector && values >= VECTOR
    ? Array.from({ length: values / VECTOR }, (_, v) =>
        b.loadVector(
          'x',
          xAt(v * VECTOR),
          Array.from({ length: VECTOR }, (_, k) => `${prefix}_x${v * VECTOR + k}`),
        ),
      ).flat()
    : Array.from({ length: values }, (_, k) => b.load('x', xAt(k)));
}

/** A lane's 16-byte W load at word `at`. */
function loadW(b: DenseBuilder, at: Expr<'u32'>, prefix: string): Var[] {
  return b.loadVector(
    'w',
    at,
    Array.from({ length: VECTOR }, (_, k) => `${prefix}${k}`),
  );
}

/** Where a lane's body words lie: whole steps from `laneWord`, then single vectors. */
interface BodySpan {
  readonly stepWords: Expr<'u32'>;
  readonly laneWord: Var<'u32'>;
  readonly fullSteps: Var<'u32'>;
  readonly restWord: Var<'u32'>;
  readonly restEnd: Var<'u32'>;
}

/**
 * A row's body: whole steps of `vectors` 16-byte loads a lane (all of a step's W loads issued, then
 * its x loads, then the FMAs), then the rest a vector at a time; locals suffixed `suffix`.
 */
function bodyLoops(b: DenseBuilder, row: Row, span: BodySpan, suffix: string): void {
  const { stepWords, laneWord, fullSteps, restWord, restEnd } = span;
  b.for(`step_${suffix}`, { start: 0, end: fullSteps }, (s, step) => {
    const stepWord = s.let(`step_word_${suffix}`, add(laneWord, mul(step, stepWords)));
    switchVectors(s, (v, vectors, tag) => {
      const at = (k: number) => (k === 0 ? stepWord : add(stepWord, k * VECTOR * WARP_SIZE));
      const w = Array.from({ length: vectors }, (_, k) => loadW(v, at(k), `w_${suffix}${tag}${k}_`)); // prettier-ignore
      const x = w.map((_, k) => loadX(v, row, `step_${suffix}${tag}${k}`, at(k), VECTOR));
      w.forEach((words, k) =>
        words
          .flatMap((word) => wordValues(row.type, word))
          .forEach((value, i) => v.assign(row.total, fma(value, x[k]![i] ?? f32(0), row.total))),
      );
    });
  });
  const restRange = { start: restWord, end: restEnd, step: VECTOR * WARP_SIZE };
  b.for(`word_${suffix}`, restRange, (r, word) =>
    accumulate(r, row, `rest_${suffix}`, word, loadW(r, word, `rest_w_${suffix}`)),
  );
}

/**
 * `build(n, tag)` for the bound `vectors` value n alone (binding folds the tests and prunes the
 * other branches); `tag` keeps the variants' locals apart.
 */
function switchVectors(
  b: DenseBuilder,
  build: (block: DenseBuilder, vectors: number, tag: string) => void,
): void {
  const ladder = (block: DenseBuilder, n: number): void => {
    if (n === MAX_VECTORS) return build(block, n, `_v${n}`);
    block.if(
      eq(block.schedule('vectors'), n),
      (then) => build(then, n, `_v${n}`),
      (otherwise) => ladder(otherwise, n + 1),
    );
  };
  ladder(b, 1);
}

/**
 * The gemv body. Workgroups stride over groups of rows, a warp a row. A row's words split into a
 * head (up to its first sector boundary, at most 7 words), a body of 16-byte vectors in whole
 * 512-byte warp loads from that boundary, and a tail (past the last 16-byte boundary, at most 3
 * words): lanes 0–7 take the head's words, lanes 8–10 the tail's, so each word is loaded once.
 * x comes in 16-byte loads where the row's x values are aligned (n_in a multiple of 4: every
 * row), else one value at a time, each in its own copy of the body's loops.
 */
function denseBody(b: DenseBuilder, type: DenseType): void {
  const vectors = b.schedule('vectors');
  const [nIn, nOut] = [b.param('n_in'), b.param('n_out')];
  const warps = div(b.schedule('workgroupSize'), WARP_SIZE);
  const { groups, lane, rowWords } = b.let({
    groups: div(add(nOut, sub(warps, 1)), warps),
    lane: b.laneId(),
    rowWords: type === 'f32' ? nIn : shr(nIn, 1),
  });
  const groupRange = { start: b.workgroupId('x'), end: groups, step: b.numWorkgroups('x') };
  b.for('group', groupRange, (g, group) => {
    const { slot } = g.let({ slot: add(mul(group, warps), g.warpId()) });
    const { live, row, total } = g.let({
      live: lt(slot, nOut),
      row: min(slot, sub(nOut, 1)),
      total: f32(0),
    });
    const { base } = g.let({ base: mul(row, rowWords) });
    const { end, xAligned } = g.let({
      end: add(base, rowWords),
      xAligned: eq(and(mul(row, nIn), VECTOR - 1), 0),
    });
    const { head } = g.let({
      head: min(and(add(base, SECTOR_WORDS - 1), ~(SECTOR_WORDS - 1) >>> 0), end),
    });
    const { bodyEnd } = g.let({ bodyEnd: max(and(end, ~(VECTOR - 1) >>> 0), head) });
    const rowContext: Omit<Row, 'xVector'> = { type, total, base };
    // Head and tail: one word a lane.
    const { edgeWord } = g.let({
      edgeWord: select(
        lt(lane, SECTOR_WORDS),
        add(base, lane),
        sub(add(bodyEnd, lane), SECTOR_WORDS),
      ),
    });
    const edgeLimit = select(lt(lane, SECTOR_WORDS), head, end);
    g.if(and(live, lt(edgeWord, edgeLimit)), (edge) => {
      const word = edge.let('edge_w', edge.load('w', edgeWord));
      accumulate(edge, { ...rowContext, xVector: false }, 'edge', edgeWord, [word]);
    });
    const stepWords = mul(vectors, VECTOR * WARP_SIZE);
    const { laneWord, fullSteps } = g.let({
      laneWord: add(head, mul(lane, VECTOR)),
      fullSteps: select(live, div(sub(bodyEnd, head), stepWords), 0),
    });
    const { restWord, restEnd } = g.let({
      restWord: add(laneWord, mul(fullSteps, stepWords)),
      restEnd: select(live, bodyEnd, 0),
    });
    const span = { stepWords, laneWord, fullSteps, restWord, restEnd };
    // The body's loops twice, so that neither tests x's alignment per vector.
    g.if(
      xAligned,
      (aligned) => bodyLoops(aligned, { ...rowContext, xVector: true }, span, 'v'),
      (scalar) => bodyLoops(scalar, { ...rowContext, xVector: false }, span, 's'),
    );
    const sum = g.reduce('add', 'row_sum', total);
    g.if(and(live, eq(lane, 0)), (store) => store.store('y', slot, sum));
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
