import { defineKernel, ir, type KernelSpec } from '@forge/ir';

/**
 * A toy two-dispatch op for tests (not in the catalog): `partial_sums` adds each workgroup's chunk
 * of `x` into the scratch buffer `partials`, then `combine` (one 32-thread workgroup) adds the
 * partials into `y[0]`. Both dispatches have a shared array named `sums`, of different lengths.
 */
export const TWO_STAGE_SUM: KernelSpec = defineKernel(
  {
    id: 'two-stage-sum',
    semanticVersion: 1,
    entryPoint: 'partial_sums',
    description: 'y[0] = sum of x[0..n), by per-workgroup partial sums in scratch then a combine',
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'y', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [{ name: 'sums', element: 'f32', length: 'chunk' }],
    schedule: [{ name: 'chunk', description: 'elements (threads) per workgroup', default: 64 }],
    launch: { workgroupSize: 'chunk', grid: ['ceil_div(n, chunk)', '1', '1'] },
    scratch: [
      { group: 0, binding: 2, name: 'partials', element: 'f32', length: 'ceil_div(n, chunk)' },
    ],
    stages: [
      {
        entryPoint: 'combine',
        shared: [{ name: 'sums', element: 'f32', length: '32' }],
        launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
        body: (b) => {
          const chunk = b.schedule('chunk');
          const count = b.let('count', ir.div(ir.sub(ir.add(b.param('n'), chunk), 1), chunk));
          const acc = b.let('acc', ir.f32(0));
          b.for('j', { start: b.localId(), end: count, step: 32 }, (loop, j) =>
            loop.assign(acc, ir.add(acc, loop.load('partials', j))),
          );
          b.store('sums', b.localId(), acc);
          b.barrier();
          const total = b.reduce('add', 'total', b.load('sums', b.localId()));
          b.if(ir.eq(b.localId(), 0), (first) => first.store('y', 0, total));
        },
      },
    ],
  },
  (b) => {
    const chunk = b.schedule('chunk');
    const index = b.let('i', ir.add(b.localId(), ir.mul(b.workgroupId('x'), chunk)));
    const value = b.let('value', ir.f32(0));
    b.if(ir.lt(index, b.param('n')), (inside) => inside.assign(value, inside.load('x', index)));
    b.store('sums', b.localId(), value);
    b.barrier();
    b.if(ir.eq(b.localId(), 0), (first) => {
      const acc = first.let('acc', ir.f32(0));
      first.for('k', { start: 0, end: chunk }, (loop, k) =>
        loop.assign(acc, ir.add(acc, loop.load('sums', k))),
      );
      first.store('partials', first.workgroupId('x'), acc);
    });
  },
);
