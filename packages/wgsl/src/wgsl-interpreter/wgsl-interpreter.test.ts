import { describe, expect, it } from 'vitest';
import type { GeneratedShader } from '@forge/ir';
import { checkCase, getKernel, makeCaseInputs } from '@forge/ir/kernels';
import { executionCasesFor, type ExecutionCase } from '@forge/test-fixtures';
import { caseShader } from '../execution-case.test-support.js';
import { WgslCompileError } from './types.test-support.js';
import { WgslSyntaxError } from './parse.test-support.js';
import { runWgslOnCpu } from './run.test-support.js';
import { WgslExecutionError } from './values.test-support.js';

// The CPU interpreter of Forge's WGSL: WGSL's numeric rules, and the faults it reports where a GPU
// would silently give another answer (races, non-uniform barriers and shuffles, bad indices).
// execution.test.ts checks it bit for bit against Dawn on every subgroup kernel case.

const firstCase = (kernelId: string): ExecutionCase => {
  const found = executionCasesFor('webgpu').find((testCase) => testCase.kernelId === kernelId);
  if (found === undefined) throw new Error(`no execution case for ${kernelId}`);
  return found;
};

/** Runs a case's shader (or `edit` of its source) on the interpreter; returns its NMSE. */
function runCase(
  kernelId: string,
  subgroupSize: number,
  edit: (source: string) => string = (source) => source,
): number {
  const testCase = firstCase(kernelId);
  const kernel = getKernel(kernelId);
  const shader = caseShader(testCase, ['f16', 'subgroups']);
  const buffers = makeCaseInputs(kernel, testCase);
  runWgslOnCpu(
    { ...shader, source: edit(shader.source) },
    { buffers, params: kernel.params(testCase.shape) },
    { subgroupSize },
  );
  return checkCase(kernel, testCase, buffers).nmse;
}

/**
 * affine-f32's launch (x in, y out, 256 lanes) around `body`, with module `functions` before the
 * entry point, run on one workgroup; returns y.
 */
function runBody(body: string, subgroupSize = 8, x: number[] = [0], functions = ''): Float32Array {
  const shader: GeneratedShader = caseShader(firstCase('affine-f32'), []);
  const head = shader.source.slice(0, shader.source.indexOf('{', shader.source.indexOf('fn ')) + 1);
  const y = new Float32Array(256);
  runWgslOnCpu(
    {
      ...shader,
      source: `${head
        .replace('@compute', `${functions}@compute`)
        .replace(
          'fn affine_f32(',
          'fn affine_f32(\n  @builtin(subgroup_size) subgroup_size: u32,',
        )}\n${body}\n}\n`,
    },
    { buffers: { x: new Float32Array(x), y }, params: { n: 1, scale: 1, bias: 0 } },
    { subgroupSize },
  );
  return y;
}

/**
 * The u32 `expression` evaluated by one lane, passed out as two exact f32 halves: an f32 holding its
 * bits could be a NaN, whose payload JS need not keep.
 */
function evaluateWord(expression: string, functions = ''): number {
  const y = runBody(
    `if (local_index == 0u) { let word: u32 = ${expression}; buf_y[0u] = f32(word >> 16u); buf_y[1u] = f32(word & 0xffffu); }`,
    8,
    [0],
    functions,
  );
  return (((y[0] ?? 0) << 16) | (y[1] ?? 0)) >>> 0;
}

describe('WGSL numeric rules', () => {
  it.each([
    ['0xffffffffu + 2u', 1],
    ['(3u - 5u)', 4294967294],
    ['(0x10000u * 0x10000u)', 0],
    ['(7u / 0u)', 7],
    ['(7u % 0u)', 0],
    ['bitcast<u32>((-7i / 2i))', 4294967293],
    ['bitcast<u32>((-7i % 2i))', 4294967295],
    ['bitcast<u32>((-8i >> 1u))', 4294967292],
    ['(0x80000000u >> 31u)', 1],
    ['(1u << 33u)', 2],
    ['u32(-1.5f)', 0],
    // Saturating at the largest f32 below 2^32 and 2^31.
    ['select(0u, 1u, (u32(5e9f) == 4294967040u))', 1],
    ['bitcast<u32>(i32(3e9f))', 0x7fffff80],
    // An integer remainder is never -0, so its f32 is +0.
    ['bitcast<u32>(f32((-4i % 2i)))', 0],
    ['bitcast<u32>(i32(-3e9f))', 2147483648],
    ['bitcast<u32>(i32(-2.9f))', 4294967294],
    ['pack2x16float(vec2<f32>(1.0f, -2.0f))', 0xc0003c00],
    ['bitcast<u32>(unpack2x16float(0x3c00c000u).y)', 0x3f800000],
    // Bytes 1, -1, 2, -1 times 1, 1, -3, 1.
    ['bitcast<u32>(dot4I8Packed(0xff02ff01u, 0x01fd0101u))', 4294967289],
    ['select(1u, 2u, (3u > 2u))', 2],
    ['bitcast<u32>(max(-0.5f, 0.25f))', 0x3e800000],
  ])('%s = %i', (expression, expected) => {
    expect(evaluateWord(expression)).toBe(expected);
  });

  it('fma rounds once by default and rounds the product first when asked', () => {
    const kernel = getKernel('affine-f32');
    const shader = caseShader(firstCase('affine-f32'), []);
    // (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46, lost if the product is rounded to f32 first.
    const a = 1 + 2 ** -23;
    const run = (fusedFma: boolean): number => {
      const y = new Float32Array(1);
      runWgslOnCpu(
        shader,
        {
          buffers: { x: new Float32Array([a]), y },
          params: { n: 1, scale: a, bias: -(1 + 2 ** -22) },
        },
        { subgroupSize: 8, fusedFma },
      );
      expect(kernel.outputs).toEqual(['y']);
      return y[0] ?? Number.NaN;
    };
    expect(run(true)).toBe(2 ** -46);
    expect(run(false)).toBe(0);
  });

  it('subgroup_size and subgroupShuffleXor follow local_index order at every size', () => {
    for (const size of [4, 8, 16, 32, 64, 128]) {
      const y = runBody(
        'buf_y[local_index] = f32((subgroup_size * 1000u) + subgroupShuffleXor(local_index, 1u));',
        size,
      );
      expect(y[0]).toBe(size * 1000 + 1);
      expect(y[255]).toBe(size * 1000 + 254);
    }
  });
});

describe('faults a GPU would not report', () => {
  it('a missing barrier between writing and reading workgroup memory is a race', () => {
    // Drop the barrier after the first warp-scratch read: the next exchange overwrites it too early.
    const dropBarrier = (source: string): string =>
      source.replace(
        /(let forge_t\d+ = [^\n]*forge_warp_scratch\[[^\n]*\n)\s*workgroupBarrier\(\);\n/,
        '$1',
      );
    expect(() => runCase('rmsnorm', 4, dropBarrier)).toThrow(
      /data race on forge_warp_scratch\[\d+\]: invocation \d+ overwrites what/,
    );
    // At 32 lanes every exchange is a shuffle, so the scratch array is never used.
    expect(runCase('rmsnorm', 32, dropBarrier)).toBeLessThan(1e-10);
  });

  it('a shuffle for an offset the subgroup does not have is caught', () => {
    // A lowering that shuffled at offset 16 in subgroups of 16 would read outside the subgroup.
    const offByOne = (source: string): string =>
      source.replaceAll('(16u < subgroup_size)', '(16u <= subgroup_size)');
    expect(() => runCase('rmsnorm', 16, offByOne)).toThrow(
      /mask 16 is not below the subgroup size 16/,
    );
    expect(runCase('rmsnorm', 8, offByOne)).toBeLessThan(1e-10);
    expect(runCase('rmsnorm', 32, offByOne)).toBeLessThan(1e-10);
  });

  it('a barrier or shuffle in non-uniform control flow is caught', () => {
    expect(() => runBody('if (local_index < 16u) { workgroupBarrier(); }')).toThrow(
      /workgroupBarrier\(\) reached by 16 of 256 invocations/,
    );
    expect(() =>
      runBody(
        'if (local_index < 2u) { buf_y[local_index] = bitcast<f32>(subgroupShuffleXor(local_index, 1u)); }',
        4,
      ),
    ).toThrow(/part of its subgroup of 4 is inactive/);
  });

  it('an index out of bounds is an error, not a clamped read', () => {
    expect(() => runBody('buf_y[local_index] = buf_x[local_index];', 8, [1])).toThrow(
      WgslExecutionError,
    );
    expect(() => runBody('buf_y[local_index] = buf_x[local_index];', 8, [1])).toThrow(
      /buf_x\[1\] is out of bounds \(1 elements\), read or written by invocation 1/,
    );
  });

  it('select evaluates both operands, as WGSL does', () => {
    expect(() =>
      runBody('if (local_index == 0u) { buf_y[0u] = select(buf_x[5u], 1.0f, true); }'),
    ).toThrow(/buf_x\[5\] is out of bounds/);
  });

  it('runs module functions such as the backend saturating conversions', () => {
    const word = evaluateWord(
      'forge_f32_to_u32(5e9f)',
      'fn forge_f32_to_u32(value: f32) -> u32 {\n  return select(u32(value), 4294967295u, value >= 4294967296.0f);\n}\n',
    );
    expect(word).toBe(4294967295);
  });

  it('WGSL outside what Forge emits is refused by name', () => {
    expect(() => runBody('loop { }')).toThrow(WgslSyntaxError);
    expect(() => runBody('buf_y[0u] = textureLoad(buf_x, 0u);')).toThrow(WgslCompileError);
    expect(() => runBody('buf_y[0u] = undeclared;')).toThrow(/unknown name 'undeclared'/);
    expect(() => runBody('buf_y[0u] = 1.0f;', 6)).toThrow(/power of two from 4 to 128, got 6/);
  });
});
