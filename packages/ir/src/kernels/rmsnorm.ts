import { WARP_SIZE, type Expr, type VarExpr as Var } from '../body.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import {
  add,
  and,
  convert,
  div,
  eq,
  f32,
  fma,
  lt,
  min,
  mul,
  select,
  sqrt,
  sub,
} from '../expressions.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { four } from './locals.js';

/** Values a vector load moves, and vec4s a thread loads a step before using any (16 values). */
const VECTOR = 4;
const UNROLL = 4;

function rmsnormInterface() {
  return {
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'w', element: 'f32', access: 'read' },
      { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
    ],
    params: [
      { name: 'n_embd', type: 'u32' },
      { name: 'rows', type: 'u32' },
      { name: 'eps', type: 'f32' },
    ],
    shared: [{ name: 'partial', element: 'f32', length: `workgroupSize / ${WARP_SIZE}` }],
  } as const; // checked by defineKernel
}
type RmsnormBuilder = BodyBuilder<DeclaredBy<ReturnType<typeof rmsnormInterface>>>;

const spec = defineKernel(
  {
    id: 'rmsnorm',
    semanticVersion: 2,
    entryPoint: 'rmsnorm',
    description:
      'y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps), one workgroup per row, 16 values a thread in flight',
    ...rmsnormInterface(),
    schedule: [
      {
        name: 'workgroupSize',
        description: 'threads per row; a multiple of the 32-lane warp',
        default: 256,
        bounds: {
          ptx: { min: 32, max: 1024, multipleOf: 32 },
          wgsl: { min: 32, max: 1024, multipleOf: 32 },
        },
      },
    ],
    launch: { workgroupSize: 'workgroupSize', grid: ['rows', '1', '1'] },
  },
  (b) => {
    const size = b.schedule('workgroupSize');
    const nEmbd = b.param('n_embd');
    const { row } = b.let({ row: b.workgroupId('x') });
    // The guard is workgroup-uniform, so the barrier inside it is reached by all threads or none.
    b.if(lt(row, b.param('rows')), (body) => {
      const { base, sum, vectorRows } = body.let({
        base: mul(row, nEmbd),
        sum: f32(0),
        // Rows of a multiple of 4 values start on 16-byte boundaries: x, w and y move in vec4s.
        vectorRows: eq(and(nEmbd, VECTOR - 1), 0),
      });
      const { first } = body.let({ first: mul(body.localId(), VECTOR) });
      const stride = mul(size, VECTOR * UNROLL);
      body.if(
        vectorRows,
        (vector) =>
          vector.for('i', { start: first, end: nEmbd, step: stride }, (loop, i) => {
            const xs = vectorsAt(loop, 'x', size, nEmbd, i, (at, u) =>
              loop.loadVector(
                'x',
                add(base, at),
                four((k) => `x${u}_${k}`),
              ),
            );
            for (const { live, values } of xs)
              for (const value of values) {
                const kept = select(live, value, f32(0));
                loop.assign(sum, fma(kept, kept, sum));
              }
          }),
        (scalar) =>
          scalar.for('i_scalar', { start: scalar.localId(), end: nEmbd, step: size }, (loop, i) => {
            const { value } = loop.let({ value: loop.load('x', add(base, i)) });
            loop.assign(sum, fma(value, value, sum));
          }),
      );
      const warpSum = body.reduce('add', 'warp_sum', sum);
      body.if(eq(body.laneId(), 0), (lane0) => lane0.store('partial', lane0.warpId(), warpSum));
      body.barrier();
      // Every warp folds the per-warp partials itself, so no second barrier is needed.
      const { part } = body.let({ part: f32(0) });
      body.if(lt(body.laneId(), div(size, WARP_SIZE)), (reader) =>
        reader.assign(part, reader.load('partial', reader.laneId())),
      );
      const total = body.reduce('add', 'total', part);
      const mean = div(total, convert('f32', nEmbd));
      const { invRms: scale } = body.let({
        invRms: div(1, sqrt(add(mean, body.param('eps')))),
      });
      body.if(
        vectorRows,
        (vector) =>
          vector.for('j', { start: first, end: nEmbd, step: stride }, (loop, j) => {
            const loaded = vectorsAt(loop, 'y', size, nEmbd, j, (at, u) => ({
              x: loop.loadVector(
                'x',
                add(base, at),
                four((k) => `y_x${u}_${k}`),
              ),
              w: loop.loadVector(
                'w',
                at,
                four((k) => `y_w${u}_${k}`),
              ),
            }));
            loaded.forEach(({ live, at, values: { x, w } }) =>
              loop.if(live, (store) => {
                const y = x.map((value, k) => mul(mul(value, scale), w[k]!));
                store.storeVector('y', add(base, at), y as [Expr<'f32'>, Expr<'f32'>, Expr<'f32'>, Expr<'f32'>]); // prettier-ignore
              }),
            );
          }),
        (scalar) =>
          scalar.for('j_scalar', { start: scalar.localId(), end: nEmbd, step: size }, (loop, j) => {
            const index = add(base, j);
            loop.store('y', index, mul(mul(loop.load('x', index), scale), loop.load('w', j)));
          }),
      );
    });
  },
);

/**
 * The UNROLL vec4s of a step from value `start`, 4·size apart: each loaded by `load` at its
 * index clamped into the row (so every load of the step issues before any use), with whether it
 * lies in the row.
 */
function vectorsAt<T>(
  b: RmsnormBuilder,
  prefix: string,
  size: Expr<'u32'>,
  nEmbd: Expr<'u32'>,
  start: Var<'u32'>,
  load: (at: Var<'u32'>, u: number) => T,
): { live: Var<'bool'>; at: Var<'u32'>; values: T }[] {
  return Array.from({ length: UNROLL }, (_, u) => {
    const index = u === 0 ? start : b.let(`${prefix}_index${u}`, add(start, mul(size, VECTOR * u)));
    const live = b.let(`${prefix}_live${u}`, lt(index, nEmbd));
    const at = b.let(`${prefix}_at${u}`, min(index, sub(nEmbd, VECTOR)));
    return { live, at, values: load(at, u) };
  });
}

/**
 * Catalog kernel `rmsnorm`: y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps) over `rows` rows
 * of `n_embd` f32, one workgroup per row (eps is 1e-6 in the catalog's params).
 */
export const rmsnorm: CatalogKernel = {
  spec,
  shapeNames: ['n_embd', 'rows'],
  defaultShape: { n_embd: 4096, rows: 3 },
  params: (shape) => ({ n_embd: shape['n_embd'] ?? 0, rows: shape['rows'] ?? 0, eps: 1e-6 }),
  bufferLengths: (shape) => {
    const n = shape['n_embd'] ?? 0;
    return { x: n * (shape['rows'] ?? 0), w: n, y: n * (shape['rows'] ?? 0) };
  },
  outputs: ['y'],
  reference(inputs, params) {
    const x = inputs['x'] ?? [];
    const w = inputs['w'] ?? [];
    const n = params['n_embd'] ?? 0;
    const rows = params['rows'] ?? 0;
    const y = new Float64Array(n * rows);
    for (let r = 0; r < rows; r++) {
      let squares = 0;
      for (let i = 0; i < n; i++) squares += (x[r * n + i] ?? 0) ** 2;
      const denominator = Math.sqrt(squares / n + (params['eps'] ?? 0));
      for (let i = 0; i < n; i++) y[r * n + i] = ((x[r * n + i] ?? 0) * (w[i] ?? 0)) / denominator;
    }
    return { y };
  },
  tolerance: 1e-10,
  // Pins a non-default workgroup size, so a schedule-dependent change shows in a golden diff.
  goldenSchedules: { ptx: [{ workgroupSize: 128 }] },
};
