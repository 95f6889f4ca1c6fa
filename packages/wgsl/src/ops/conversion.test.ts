import { afterAll, describe, expect, it } from 'vitest';
import { defineKernel, interpret, ir } from '@forge/ir';
import { emitWgsl } from '../emit.js';
import { wgslDiagnostics } from '../runner/compile.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from '../runner/index.js';
import { wgslTarget } from '../targets.js';

afterAll(closeSharedWebGpu);

/** y[i] = x[i] through `depth` rounds of f32 → u32 → f32 (each saturating), then → u32 and → i32. */
function chain(depth: number) {
  return defineKernel(
    {
      id: 'convert_chain',
      semanticVersion: 1,
      entryPoint: 'convert_chain',
      description: 'nested saturating conversions',
      buffers: [
        { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
        { group: 0, binding: 1, name: 'y', element: 'u32', access: 'read_write' },
        { group: 0, binding: 2, name: 'z', element: 'i32', access: 'read_write' },
      ],
      params: [],
      shared: [],
      schedule: [],
      launch: { workgroupSize: '8', grid: ['1', '1', '1'] },
    },
    (b) => {
      let value = b.load('x', b.localId());
      for (let round = 0; round < depth; round++)
        value = ir.convert('f32', ir.convert('u32', value));
      b.store('y', b.localId(), ir.convert('u32', value));
      b.store('z', b.localId(), ir.convert('i32', b.load('x', b.localId())));
    },
  );
}

describe('f32 to integer conversions in WGSL', () => {
  it('saturate through one module function per type, so nested ones grow the text linearly', () => {
    // Written inline, the saturation test doubled the text at every level: 20 levels were 142 MB.
    const source = emitWgsl(chain(40), {}, wgslTarget([])).source;
    expect(source.length).toBeLessThan(8_000);
    expect(source.match(/^fn forge_f32_to_u32\(value: f32\) -> u32 \{$/gm)).toHaveLength(1);
    expect(source.match(/^fn forge_f32_to_i32\(value: f32\) -> i32 \{$/gm)).toHaveLength(1);
    expect(source.match(/forge_f32_to_u32\(/g)).toHaveLength(42);
  });

  it('compiles in Tint and saturates like the interpreter on WebGPU', async () => {
    const spec = chain(3);
    const shader = emitWgsl(spec, {}, wgslTarget([]));
    const context = await sharedWebGpu([]);
    expect(await wgslDiagnostics(context, shader.source)).toEqual([]);
    const x = Float32Array.of(0, 1.75, -3, 4294967296, 3e9, 2147483648, -2147483904, 1e20);
    const buffers = () => ({ x, y: new Uint32Array(8), z: new Int32Array(8) });
    const [gpu, expected] = [buffers(), buffers()];
    await runWgsl(context, shader, { buffers: gpu, params: {} });
    interpret(spec, { params: {}, buffers: expected });
    expect([...gpu.y]).toEqual([...expected.y]);
    expect([...gpu.z]).toEqual([...expected.z]);
    expect([...expected.y]).toEqual([0, 1, 0, 4294967295, 3000000000, 2147483648, 0, 4294967295]);
    expect([...expected.z].slice(3)).toEqual([2147483647, 2147483647, 2147483647, -2147483648, 2147483647]); // prettier-ignore
  });
});
