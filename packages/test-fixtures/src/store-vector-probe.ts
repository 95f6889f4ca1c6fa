import { defineKernel, ir } from '@forge/ir';

/**
 * Test data, a probe kernel every engine's store_vector test runs. For k < n it stages a[4k..4k+3]
 * reversed into the shared array `tile` by a width-4 store_vector (PTX must align `tile` to 16
 * bytes), reads it back and writes out[4k..4k+3] = (a[4k+3], a[4k+2] + 1, 2·a[4k+1], 5) by another
 * (`out` is written only so: WGSL declares it array<vec4<f32>>), and pairs[2k..2k+1] = (k, 7k + 1)
 * by a width-2 one; thread 0 also stores pairs[2n] = n + 100 alone, so WGSL keeps `pairs`
 * array<u32> and splits its vector stores.
 */
export const STORE_VECTOR_PROBE = defineKernel(
  {
    id: 'store-vector-probe',
    semanticVersion: 1,
    entryPoint: 'store_vector_probe',
    description: 'out[4k..] = (a[4k+3], a[4k+2] + 1, 2 a[4k+1], 5), pairs[2k..] = (k, 7k + 1)',
    buffers: [
      { group: 0, binding: 0, name: 'a', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'f32', access: 'read_write' },
      { group: 0, binding: 2, name: 'pairs', element: 'u32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [{ name: 'tile', element: 'f32', length: '128' }],
    schedule: [],
    launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
  },
  (b) => {
    const k = b.let('k', b.localId());
    const inside = b.let('inside', ir.lt(k, b.param('n')));
    const first = b.let('first', ir.mul(k, 4));
    b.if(inside, (stage) => {
      const [a0, a1, a2, a3] = stage.loadVector('a', first, ['a0', 'a1', 'a2', 'a3']);
      stage.storeVector('tile', first, [a3, a2, a1, a0]);
    });
    b.barrier();
    b.if(inside, (then) => {
      const [t0, t1, t2] = then.loadVector('tile', first, ['t0', 't1', 't2', 't3']);
      then.storeVector('out', first, [t0, ir.add(t1, 1), ir.mul(t2, 2), 5]);
      then.storeVector('pairs', ir.mul(k, 2), [k, ir.add(ir.mul(k, 7), 1)]);
    });
    b.if(ir.eq(k, 0), (single) => {
      const n = single.param('n');
      single.store('pairs', ir.mul(n, 2), ir.add(n, 100));
    });
  },
);

/**
 * Test data: STORE_VECTOR_PROBE's input for n groups and the outputs every engine must produce,
 * exactly.
 */
export function storeVectorProbeCase(n: number): {
  a: Float32Array;
  out: Float32Array;
  pairs: Uint32Array;
} {
  const a = Float32Array.from({ length: 4 * n }, (_, i) => i * 0.75 - 5);
  const out = new Float32Array(4 * n);
  const pairs = new Uint32Array(2 * n + 1);
  for (let k = 0; k < n; k++) {
    const at = (j: number): number => a[4 * k + j] ?? 0;
    out.set([at(3), Math.fround(at(2) + 1), at(1) * 2, 5], 4 * k);
    pairs.set([k, 7 * k + 1], 2 * k);
  }
  pairs[2 * n] = n + 100;
  return { a, out, pairs };
}
