import { defineKernel, ir } from '@forge/ir';

/**
 * Test data, a probe kernel every engine's load_vector test runs. For k < n: out[4k + j] =
 * a[4k + j] + b[2k + j % 2] + b[2k + 1], so every element of every load shows. `a` is read only by
 * width-4 load_vectors (WGSL declares it array<vec4<f32>>) and staged through the shared array
 * `tile`, read back by width-4 load_vectors too (PTX must align it to 16 bytes); `b` is read by a
 * width-2 load_vector and a scalar load, so WGSL keeps array<u32> and splits the vector access.
 */
export const LOAD_VECTOR_PROBE = defineKernel(
  {
    id: 'load-vector-probe',
    semanticVersion: 1,
    entryPoint: 'load_vector_probe',
    description: 'out[4k + j] = a[4k + j] + b[2k + j % 2] + b[2k + 1] through vector loads',
    buffers: [
      { group: 0, binding: 0, name: 'a', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'b', element: 'u32', access: 'read' },
      { group: 0, binding: 2, name: 'out', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [{ name: 'tile', element: 'f32', length: '128' }],
    schedule: [],
    launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
  },
  (b) => {
    const k = b.let('k', b.localId());
    const inside = b.let('inside', ir.lt(k, b.param('n')));
    const first = ir.mul(k, ir.u32(4));
    b.if(inside, (stage) => {
      const a = stage.loadVector('a', first, ['a0', 'a1', 'a2', 'a3']);
      a.forEach((value, j) => stage.store('tile', ir.add(first, ir.u32(j)), value));
    });
    b.barrier();
    b.if(inside, (then) => {
      const a = then.loadVector('tile', first, ['t0', 't1', 't2', 't3']);
      const pair = then.loadVector('b', ir.mul(k, ir.u32(2)), ['b0', 'b1']);
      const last = then.let(
        'b_last',
        ir.convert('f32', then.load('b', ir.add(ir.mul(k, ir.u32(2)), ir.u32(1)))),
      );
      a.forEach((value, j) => {
        const other = ir.convert('f32', pair[j % 2] ?? ir.u32(0));
        then.store('out', ir.add(first, ir.u32(j)), ir.add(ir.add(value, other), last));
      });
    });
  },
);

/**
 * Test data: LOAD_VECTOR_PROBE's inputs for n groups and the outputs every engine must produce,
 * exactly.
 */
export function loadVectorProbeCase(n: number): {
  a: Float32Array;
  b: Uint32Array;
  expected: Float32Array;
} {
  const a = Float32Array.from({ length: 4 * n }, (_, i) => i * 0.5 - 3);
  const b = Uint32Array.from({ length: 2 * n }, (_, i) => 7 * i + 1);
  const expected = new Float32Array(4 * n);
  for (let k = 0; k < n; k++)
    for (let j = 0; j < 4; j++)
      expected[4 * k + j] = (a[4 * k + j] ?? 0) + (b[2 * k + (j % 2)] ?? 0) + (b[2 * k + 1] ?? 0);
  return { a, b, expected };
}
