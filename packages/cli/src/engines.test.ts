import { describe, expect, it } from 'vitest';
import { defineKernel, ir, ready } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { ENGINES } from './engines.js';

// Two dispatches over one scratch buffer: t[i] = 2 x[i], then y[i] = t[n - 1 - i] + 1, so the
// second reads what other workgroups of the first wrote.
const SPEC = defineKernel(
  {
    id: 'two-dispatch-reverse',
    semanticVersion: 1,
    entryPoint: 'double',
    description: 'y[i] = 2 x[n - 1 - i] + 1 through a scratch buffer',
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'y', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '64', grid: ['ceil_div(n, 64)', '1', '1'] },
    scratch: [{ group: 1, binding: 0, name: 't', element: 'f32', length: 'n' }],
    stages: [
      {
        entryPoint: 'reverse',
        shared: [],
        launch: { workgroupSize: '32', grid: ['ceil_div(n, 32)', '1', '1'] },
        body: (b) => {
          const i = b.let('i', ir.add(b.localId(), ir.mul(b.workgroupId('x'), 32)));
          b.if(ir.lt(i, b.param('n')), (inside) => {
            const source = ir.sub(ir.sub(inside.param('n'), 1), i);
            inside.store('y', i, ir.add(inside.load('t', source), ir.f32(1)));
          });
        },
      },
    ],
  },
  (b) => {
    const i = b.let('i', ir.add(b.localId(), ir.mul(b.workgroupId('x'), 64)));
    b.if(ir.lt(i, b.param('n')), (inside) =>
      inside.store('t', i, ir.mul(inside.load('x', i), ir.f32(2))),
    );
  },
);

describe('the run engines on a multi-dispatch kernel', () => {
  // The engines read only the kernel's spec.
  const kernel = { ...getKernel('affine-f32'), spec: SPEC };

  it.each(['interp', 'ptx-sim', 'wgsl'])('%s runs every dispatch in order', async (name) => {
    await ready();
    const engine = ENGINES[name];
    if (engine === undefined) throw new Error(`no engine ${name}`);
    const n = 200;
    const x = Float32Array.from({ length: n }, (_, index) => index - 50);
    const y = new Float32Array(n);
    const result = await engine({
      kernel,
      schedule: {},
      target: undefined,
      buffers: { x, y },
      params: { n },
    });
    expect(result.findings ?? []).toEqual([]);
    expect([...y]).toEqual([...x].reverse().map((value) => 2 * value + 1));
  });
});
