import {
  ForgeError,
  ValidationError,
  f16Bits,
  f16FromBits,
  type ElementType,
  type GeneratedShader,
  type LaunchBinding,
  type LaunchParameter,
} from '@forge/ir';
import { afterAll, describe, expect, it } from 'vitest';
import { WebGpuError, WebGpuFeatureError, WebGpuLimitError, WgslCompileError } from './errors.js';
import { launchGrid, runWgsl } from './run.js';
import { closeSharedWebGpu, sharedWebGpu } from './shared.js';
import type { WgslTarget } from '../targets.js';

afterAll(closeSharedWebGpu);

interface TestKernel {
  readonly source: string;
  readonly buffers: readonly [name: string, element: ElementType, access: 'read' | 'read_write'][];
  readonly params: readonly [name: string, type: 'u32' | 'i32' | 'f32'][];
  readonly grid?: readonly [string, string, string];
  readonly workgroupSize?: number;
  readonly requiredFeatures?: readonly string[];
}

/** A GeneratedShader as the WGSL backend describes one: buffers at 0..k-1 of group 0, then params. */
function shaderOf(kernel: TestKernel): GeneratedShader<WgslTarget> {
  const bindings: LaunchBinding[] = kernel.buffers.map(([name, element, access], binding) => ({
    group: 0,
    binding,
    name,
    kind: 'buffer',
    sourceName: name,
    access,
    element,
  }));
  bindings.push({
    group: 0,
    binding: bindings.length,
    name: 'params',
    kind: 'params',
    sourceName: 'params',
    access: 'uniform',
  });
  const parameters = kernel.params.map(([name, type], index): LaunchParameter => ({
    name,
    kind: 'scalar',
    sourceName: name,
    type,
    offset: 4 * index,
    size: 4,
    align: 4,
  }));
  const workgroupSize = kernel.workgroupSize ?? 64;
  return {
    kernelId: 'test-kernel',
    semanticHash: '',
    sourceHash: '',
    cacheKey: '',
    target: { kind: 'wgsl', features: [] },
    schedule: { workgroupSize },
    source: kernel.source,
    launch: {
      entryPoint: 'main',
      workgroupSize: [workgroupSize, 1, 1],
      grid: kernel.grid ?? ['ceil_div(n, workgroupSize)', '1', '1'],
      sharedBytes: 0,
      parameters,
      parameterBytes: Math.ceil((4 * parameters.length) / 16) * 16,
      bindings,
      requiredFeatures: kernel.requiredFeatures ?? [],
    },
  };
}

const AFFINE = shaderOf({
  source: `struct Params { n: u32, scale: f32, bias: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i < params.n) {
    y[i] = x[i] * params.scale + params.bias;
  }
}
`,
  buffers: [
    ['x', 'f32', 'read'],
    ['y', 'f32', 'read_write'],
  ],
  params: [
    ['n', 'u32'],
    ['scale', 'f32'],
    ['bias', 'f32'],
  ],
});

describe('runWgsl', () => {
  it('computes y = x*scale + bias over a ragged n and leaves the tail alone', async () => {
    const context = await sharedWebGpu();
    const n = 1000; // not a multiple of the workgroup size
    const x = Float32Array.from({ length: n + 3 }, (_, i) => i * 0.25 - 7);
    const y = new Float32Array(n + 3).fill(-1);
    const result = await runWgsl(context, AFFINE, {
      buffers: { x, y },
      params: { n, scale: 1.5, bias: 0.25 },
    });
    expect(result.grid).toEqual([16, 1, 1]);
    expect(result.milliseconds).toBeGreaterThan(0);
    for (let i = 0; i < n; i++) expect(y[i]).toBe(Math.fround(Math.fround(x[i] ?? 0) * 1.5 + 0.25));
    expect([...y.subarray(n)]).toEqual([-1, -1, -1]);
    expect(x[1]).toBe(-6.75); // read-only buffers are not written back
  });

  it('round-trips u32 and i32 buffers bit for bit, with i32 and u32 params', async () => {
    const context = await sharedWebGpu();
    const shader = shaderOf({
      source: `struct Params { n: u32, mask: u32, offset: i32 }
@group(0) @binding(0) var<storage, read_write> u: array<u32>;
@group(0) @binding(1) var<storage, read_write> s: array<i32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < params.n) {
    u[id.x] = u[id.x] ^ params.mask;
    s[id.x] = s[id.x] + params.offset;
  }
}
`,
      buffers: [
        ['u', 'u32', 'read_write'],
        ['s', 'i32', 'read_write'],
      ],
      params: [
        ['n', 'u32'],
        ['mask', 'u32'],
        ['offset', 'i32'],
      ],
    });
    const u = Uint32Array.from([0, 1, 0x8000_0000, 0xffff_ffff, 0x1234_5678]);
    const s = Int32Array.from([0, -1, -2147483647, 2147483600, 42]);
    const mask = 0xf0f0_f0f0;
    const expectedU = [...u].map((value) => (value ^ mask) >>> 0);
    const expectedS = [...s].map((value) => (value - 7) | 0);
    await runWgsl(context, shader, { buffers: { u, s }, params: { n: 5, mask, offset: -7 } });
    expect([...u]).toEqual(expectedU);
    expect([...s]).toEqual(expectedS);
  });

  it('round-trips f16 buffers as Uint16Array bits, odd lengths included', async () => {
    const context = await sharedWebGpu(['shader-f16']);
    const shader = shaderOf({
      source: `enable f16;
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read_write> b: array<f16>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < params.n) {
    b[id.x] = a[id.x] * 2.0h + b[id.x];
  }
}
`,
      buffers: [
        ['a', 'f16', 'read'],
        ['b', 'f16', 'read_write'],
      ],
      params: [['n', 'u32']],
      requiredFeatures: ['shader-f16'],
    });
    const values = [0.5, -1.25, 1000, 3.140625, -0.0009765625];
    const a = Uint16Array.from(values, f16Bits);
    const b = Uint16Array.from([1, 1, 1, 1, 1], f16Bits);
    await runWgsl(context, shader, { buffers: { a, b }, params: { n: 5 } });
    expect([...b].map(f16FromBits)).toEqual([2, -1.5, 2001, 7.28125, 0.998046875]);
  });

  it('binds a buffer the entry point never uses (explicit layout)', async () => {
    const context = await sharedWebGpu();
    const shader = shaderOf({
      source: `struct Params { n: u32, value: f32 }
@group(0) @binding(0) var<storage, read> unused: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < params.n) { y[id.x] = params.value; }
}
`,
      buffers: [
        ['unused', 'f32', 'read'],
        ['y', 'f32', 'read_write'],
      ],
      params: [
        ['n', 'u32'],
        ['value', 'f32'],
      ],
    });
    const y = new Float32Array(3);
    await runWgsl(context, shader, {
      buffers: { unused: new Float32Array(0), y },
      params: { n: 3, value: 2.5 },
    });
    expect([...y]).toEqual([2.5, 2.5, 2.5]);
  });

  it('dispatches every grid dimension', async () => {
    const context = await sharedWebGpu();
    const shader = shaderOf({
      source: `struct Params { n: u32 }
@group(0) @binding(0) var<storage, read_write> ids: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) count: vec3<u32>) {
  let slot = (wg.z * count.y + wg.y) * count.x + wg.x;
  ids[slot] = wg.x * 100u + wg.y * 10u + wg.z + params.n;
}
`,
      buffers: [['ids', 'u32', 'read_write']],
      params: [['n', 'u32']],
      grid: ['n', 'n + 1', '2'],
      workgroupSize: 1,
    });
    expect(launchGrid(shader, { n: 2 })).toEqual([2, 3, 2]);
    const ids = new Uint32Array(12);
    const result = await runWgsl(context, shader, { buffers: { ids }, params: { n: 2 } });
    expect(result.grid).toEqual([2, 3, 2]);
    const expected: number[] = [];
    for (let z = 0; z < 2; z++)
      for (let y = 0; y < 3; y++)
        for (let x = 0; x < 2; x++) expected.push(x * 100 + y * 10 + z + 2);
    expect([...ids]).toEqual(expected);
  });

  it('rejects a grid dimension over maxComputeWorkgroupsPerDimension', async () => {
    const context = await sharedWebGpu();
    const maximum = context.device.limits.maxComputeWorkgroupsPerDimension;
    const inputs = {
      buffers: { x: new Float32Array(1), y: new Float32Array(1) },
      params: { n: 64 * (maximum + 1), scale: 1, bias: 0 },
    };
    const error = await runWgsl(context, AFFINE, inputs).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WebGpuLimitError);
    expect(error).toBeInstanceOf(ForgeError);
    expect(error instanceof Error ? error.message : '').toBe(
      `grid dimension x is ${maximum + 1}, over the device's maxComputeWorkgroupsPerDimension of ${maximum}`,
    );
    const explicit = { ...inputs, params: { n: 1, scale: 1, bias: 0 } };
    await expect(runWgsl(context, AFFINE, explicit, { grid: [1, maximum + 1, 1] })).rejects.toThrow(
      /^grid dimension y is \d+, over the device's maxComputeWorkgroupsPerDimension/,
    );
  });

  it('rejects bad inputs with a ValidationError naming the field', async () => {
    const context = await sharedWebGpu();
    const inputs = {
      buffers: { x: new Float32Array(4), y: new Uint32Array(4) },
      params: { n: 4, scale: 1, bias: 0 },
    };
    const error = await runWgsl(context, AFFINE, inputs).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ path: 'buffers.y' });
  });

  it('reports compile errors with line:column before creating a pipeline', async () => {
    const context = await sharedWebGpu();
    const broken = { ...AFFINE, source: AFFINE.source.replace('params.bias', 'params.bais') };
    const inputs = {
      buffers: { x: new Float32Array(4), y: new Float32Array(4) },
      params: { n: 4, scale: 1, bias: 0 },
    };
    const error = await runWgsl(context, broken, inputs).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WgslCompileError);
    expect(error).toMatchObject({
      line: 10,
      sourceLine: '    y[i] = x[i] * params.scale + params.bais;',
    });
  });

  it('turns a WebGPU validation error into a WebGpuError', async () => {
    const context = await sharedWebGpu();
    // The launch says x is read-only, the source declares it read_write: the layout does not match.
    const mismatched = {
      ...AFFINE,
      source: AFFINE.source.replace('var<storage, read> x', 'var<storage, read_write> x'),
    };
    const inputs = {
      buffers: { x: new Float32Array(4), y: new Float32Array(4) },
      params: { n: 4, scale: 1, bias: 0 },
    };
    const error = await runWgsl(context, mismatched, inputs).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WebGpuError);
    expect(error instanceof Error ? error.message : '').toMatch(
      /^test-kernel: WebGPU rejected the launch: /,
    );
    // The device is still usable afterwards.
    const y = new Float32Array(4);
    await runWgsl(context, AFFINE, {
      buffers: { x: new Float32Array(4).fill(1), y },
      params: { n: 4, scale: 2, bias: 1 },
    });
    expect([...y]).toEqual([3, 3, 3, 3]);
  });

  it('needs the features the shader requires on the device', async () => {
    const context = await sharedWebGpu();
    const needsF16 = { ...AFFINE, launch: { ...AFFINE.launch, requiredFeatures: ['shader-f16'] } };
    const inputs = {
      buffers: { x: new Float32Array(4), y: new Float32Array(4) },
      params: { n: 4, scale: 1, bias: 0 },
    };
    await expect(runWgsl(context, needsF16, inputs)).rejects.toThrow(WebGpuFeatureError);
  });

  it('rejects a workgroup larger than the device allows', async () => {
    const context = await sharedWebGpu();
    const maximum = context.device.limits.maxComputeInvocationsPerWorkgroup;
    const huge = {
      ...AFFINE,
      launch: { ...AFFINE.launch, workgroupSize: [maximum, 2, 1] as const },
    };
    const inputs = {
      buffers: { x: new Float32Array(4), y: new Float32Array(4) },
      params: { n: 4, scale: 1, bias: 0 },
    };
    await expect(runWgsl(context, huge, inputs)).rejects.toThrow(
      `invocations per workgroup is ${2 * maximum}, over the device's maxComputeInvocationsPerWorkgroup of ${maximum}`,
    );
  });
});
