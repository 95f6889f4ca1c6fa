import { WARP_SIZE } from '../body.js';
import { defineKernel } from '../builder.js';
import { add, convert, div, eq, f32, fma, lt, mul, sqrt } from '../expressions.js';
import type { CatalogKernel } from './catalog-kernel.js';

const spec = defineKernel(
  {
    id: 'rmsnorm',
    semanticVersion: 1,
    entryPoint: 'rmsnorm',
    description: 'y[r,i] = x[r,i] * w[i] / sqrt(mean_i x[r,i]^2 + eps), one workgroup per row',
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
      const { base, sum } = body.let({ base: mul(row, nEmbd), sum: f32(0) });
      body.for('i', { start: body.localId(), end: nEmbd, step: size }, (loop, i) => {
        const { value } = loop.let({ value: loop.load('x', add(base, i)) });
        loop.assign(sum, fma(value, value, sum));
      });
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
      body.for('j', { start: body.localId(), end: nEmbd, step: size }, (loop, j) => {
        const index = add(base, j);
        loop.store('y', index, mul(mul(loop.load('x', index), scale), loop.load('w', j)));
      });
    });
  },
);

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
