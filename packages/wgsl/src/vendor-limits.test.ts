/// <reference types="webgpu" preserve="true" />
import { afterAll, describe, expect, it } from 'vitest';
import { type KernelSpec } from '@forge/ir';
import {
  CONSTANT_BOUNDARY_CASES,
  addChain,
  limitSpec,
  negChain,
  nestedIfs,
  storeF32,
} from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, sharedWebGpu, wgslDiagnostics } from './runner/index.js';
import { dawnGpu } from './runner/dawn.js';
import { explicitLayout } from './runner/pipeline.js';
import { wgslTarget } from './targets.js';

// The validator's limits against the real Tint and Dawn: what Forge accepts at each limit
// compiles, and the facts behind each rejection still hold.

afterAll(closeSharedWebGpu);

async function tintErrors(source: string): Promise<string[]> {
  const context = await sharedWebGpu(['shader-f16']);
  const diagnostics = await wgslDiagnostics(context, source);
  return diagnostics.filter((entry) => entry.type === 'error').map((entry) => entry.message);
}

const emitted = (spec: KernelSpec): string => emitWgsl(spec, {}, wgslTarget(['f16'])).source;

describe('Tint accepts what Forge accepts at its limits', () => {
  it.each(Object.entries(CONSTANT_BOUNDARY_CASES))(
    'constant boundary: %s',
    async (_name, value) => {
      expect(await tintErrors(emitted(limitSpec([storeF32(value)])))).toEqual([]);
    },
  );

  it('50 nested ifs around an expression at nesting cost 100, and the longest chains', async () => {
    for (const body of [
      nestedIfs(50, [storeF32(negChain(24))]),
      [storeF32(addChain(99))],
      [storeF32(negChain(49))],
    ])
      expect(await tintErrors(emitted(limitSpec(body)))).toEqual([]);
  });
});

describe('Tint rejects the constant expressions Forge rejects', () => {
  const snippets: [string, RegExp][] = [
    ['let a = 5u / 0u;', /division by zero/],
    ['let a = 5i % 0i;', /division by zero/],
    ['let a = i / 0u;', /division by zero/],
    ['let a = i << 40u;', /less than the bit width/],
    ['let a = bitcast<u32>(3i) << 31u;', /cannot be represented as 'u32'/],
    ['let a = bitcast<i32>(1u) << 31u;', /sign change/],
    ['let a = bitcast<i32>(0x80000000u) / -1i;', /cannot be represented as 'i32'/],
    ['let a = 1u << 32u;', /less than the bit width/],
    ['let a = 1.0f / 0.0f;', /cannot be represented/],
    ['let a = sqrt(-1.0f);', /sqrt must be called with a value >= 0/],
    ['let a = log2(0.0f);', /log2 must be called with a value > 0/],
    ['let a = inverseSqrt(0.0f);', /inverseSqrt must be called with a value > 0/],
    ['let a = exp2(128.0f);', /cannot be represented/],
    ['let a = 3e38f + 3e38f;', /cannot be represented/],
    ['let a = bitcast<f32>(0x7f800000u);', /cannot be represented/],
    ['let a = unpack2x16float(0x7c000000u).x;', /cannot be represented/],
    ['let a = pack2x16float(vec2<f32>(0.0f, 65520.0f));', /cannot be represented/],
    ['let a = f16(65505.0f);', /cannot be represented as 'f16'/],
    ['let a = 65504.0h + 1.0h;', /cannot be represented as 'f16'/],
    ['t[32] = 0.0f;', /out of bounds/],
  ];
  it.each(snippets)('%s', async (statement, message) => {
    const source = `enable f16;\nvar<workgroup> t: array<f32, 32>;\n@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) i: u32) {\n  ${statement}\n}\n`;
    const [error] = await tintErrors(source);
    expect(error).toMatch(message);
  });

  // Forge's own output stops earlier (the validator rejects it), so these are written directly.
  const nested = (ifs: number, negations: number): string => {
    const value = `${'(-'.repeat(negations)}f32(i)${')'.repeat(negations)}`;
    const body = `${'if (i < 5u) {'.repeat(ifs)} out = ${value}; ${'}'.repeat(ifs)}`;
    return `var<private> out: f32;\n@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) i: u32) {\n${body}\n}\n`;
  };
  it('stops at 63 nested ifs, and at 63 nested negations', async () => {
    expect(await tintErrors(nested(62, 0))).toEqual([]);
    expect((await tintErrors(nested(63, 0)))[0]).toMatch(/nesting depth/);
    expect(await tintErrors(nested(0, 62))).toEqual([]);
    expect((await tintErrors(nested(0, 63)))[0]).toMatch(/maximum parser recursive depth/);
    expect((await tintErrors(nested(40, 45)))[0]).toMatch(/maximum parser recursive depth/);
  });
});

describe('WebGPU binding limits on a device with default limits', () => {
  async function pipelineError(spec: KernelSpec): Promise<string | undefined> {
    const gpu = await dawnGpu();
    const adapter = await gpu.requestAdapter();
    if (adapter === null) throw new Error('no WebGPU adapter');
    const device = await adapter.requestDevice();
    try {
      const shader = emitWgsl(spec, {}, wgslTarget([]));
      device.pushErrorScope('validation');
      const layout = explicitLayout(device, shader.launch.bindings ?? []);
      device.createComputePipeline({
        layout: layout.pipelineLayout,
        compute: { module: device.createShaderModule({ code: shader.source }), entryPoint: shader.launch.entryPoint }, // prettier-ignore
      });
      return (await device.popErrorScope())?.message;
    } finally {
      device.destroy();
    }
  }
  const buffers = (count: number, binding = (index: number) => index): KernelSpec['buffers'] =>
    Array.from({ length: count }, (_, index) => ({
      group: 1,
      binding: binding(index),
      name: `out${index}`,
      element: 'u32' as const,
      access: 'read_write' as const,
    }));
  const storeAll = (count: number): KernelSpec['body'] =>
    Array.from({ length: count }, (_, index) => ({
      op: 'store' as const,
      memory: `out${index}`,
      index: { op: 'const' as const, type: 'u32' as const, value: 0 },
      value: { op: 'const' as const, type: 'u32' as const, value: 1 },
    }));

  it('8 storage buffers and binding 999 create a pipeline', async () => {
    expect(await pipelineError(limitSpec(storeAll(8), { buffers: buffers(8) }))).toBeUndefined();
    const high = buffers(1, () => 999);
    expect(await pipelineError(limitSpec(storeAll(1), { buffers: high }))).toBeUndefined();
  });

  it('9 storage buffers or binding 1000 do not', async () => {
    // Forge rejects the spec; the bind group layouts below show Dawn would have failed.
    const nine = limitSpec(storeAll(9), { buffers: buffers(9) });
    await expect(pipelineError(nine)).rejects.toThrow(/storage buffers exceed/);
    const gpu = await dawnGpu();
    const adapter = await gpu.requestAdapter();
    const device = await adapter!.requestDevice();
    device.pushErrorScope('validation');
    device.createBindGroupLayout({
      entries: [{ binding: 1000, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }],
    });
    expect((await device.popErrorScope())?.message).toMatch(/1000|maxBindingsPerBindGroup/);
    const entries = Array.from({ length: 9 }, (_, binding): GPUBindGroupLayoutEntry => ({
      binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: 'storage' },
    }));
    device.pushErrorScope('validation');
    device.createBindGroupLayout({ entries });
    expect((await device.popErrorScope())?.message).toMatch(/maxStorageBuffersPerShaderStage/);
    device.destroy();
  });
});
