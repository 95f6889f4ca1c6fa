import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from '../parser/index.js';
import type { PtxModule } from '../ast.js';
import { formatFinding } from './findings.js';
import { simulate, type KernelArgument } from './simulate.js';

// real-engine.cu compiled by `nvcc -ptx -O3 -arch=sm_80|sm_90` (CUDA 13.0), checked in so the test
// needs no nvcc; packages/ptx checks that ptxas assembles both. Some of its entries call device
// functions, which the simulator lacks, so it parses with lazyEntries.
const ARCHS = ['sm_80', 'sm_90'] as const;
const texts = new Map<string, string>(
  ARCHS.map((arch) => [
    arch,
    readFileSync(new URL(`../fixtures/real-engine.${arch}.ptx`, import.meta.url), 'utf8'),
  ]),
);
const modules = new Map<string, PtxModule>(
  ARCHS.map((arch) => [arch, parsePtx(texts.get(arch) ?? '', { lazyEntries: true })]),
);

const f32 = Math.fround;
const buffer = (array: Float32Array | Uint16Array): KernelArgument => ({
  kind: 'buffer',
  bytes: new Uint8Array(array.buffer),
});

function run(
  arch: string,
  entry: string,
  grid: number,
  block: number,
  args: Record<string, KernelArgument>,
  dynamicSharedBytes = 0,
) {
  const result = simulate(modules.get(arch) as PtxModule, {
    entry,
    grid: [grid, 1, 1],
    block: [block, 1, 1],
    args: Object.fromEntries(
      Object.entries(args).map(([name, value]) => [`${entry}_param_${name}`, value]),
    ),
    dynamicSharedBytes,
  });
  return result.findings.map(formatFinding);
}

const sines = (count: number) => new Float32Array(count).map((_, index) => Math.sin(index * 0.7));

describe.each(ARCHS)('nvcc -O3 %s kernels using real engines’ constructs', (arch) => {
  it('uses the constructs it is meant to (guards the fixture)', () => {
    const text = texts.get(arch) ?? '';
    expect(text).toMatch(/st\.shared\.f32 s_acc\[%r\d+\+32\]/);
    expect(text).toMatch(/\.extern \.shared \.align 16 \.b8 partial\[\];/);
    if (arch === 'sm_80') expect(text).toMatch(/mov\.b32 %f\d+, \{0,%rs\d+\};/);
    else expect(text).toMatch(/griddepcontrol\.wait;[\s\S]*griddepcontrol\.launch_dependents;/);
  });

  it('parses only lazily: entries it cannot run fail when launched, naming entry and line', () => {
    expect(() => parsePtx(texts.get(arch) ?? '')).toThrow(/device functions are not supported/);
    const unrunnable: readonly (readonly [string, RegExp])[] = [
      ['calls_function', /entry 'calls_function' cannot run: .param inside a body/],
      ['prints', /entry 'prints' cannot run: .param inside a body/],
      ...(arch === 'sm_90'
        ? [['clustered', /entry 'clustered' cannot run: .*'.explicitcluster'/] as const]
        : []),
    ];
    for (const [entry, message] of unrunnable) {
      const launch = () => run(arch, entry, 1, 32, { 0: buffer(new Float32Array(32)) });
      expect(launch).toThrow(PtxSyntaxError);
      expect(launch).toThrow(message);
    }
  });

  it('bf16_widen: bf16 to f32, times 2', () => {
    const n = 100;
    const source = sines(n);
    const bits = new Uint16Array(n).map((_, index) => {
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, source[index] as number);
      return view.getUint16(0);
    });
    const out = new Float32Array(n + 28);
    expect(
      run(arch, 'bf16_widen', 4, 32, { 0: buffer(bits), 1: buffer(out), 2: scalar(n) }),
    ).toEqual([]);
    for (let index = 0; index < n; index++) {
      const view = new DataView(new ArrayBuffer(4));
      view.setUint32(0, (bits[index] as number) << 16);
      expect(out[index]).toBe(view.getFloat32(0) * 2);
    }
    expect(out[n]).toBe(0);
  });

  it('shared_reverse: array-indexed shared stores and loads', () => {
    const x = sines(3 * 64);
    const out = new Float32Array(3 * 64);
    expect(run(arch, 'shared_reverse', 3, 32, { 0: buffer(x), 1: buffer(out) })).toEqual([]);
    for (let index = 0; index < 3 * 64; index++)
      expect(out[index]).toBe(x[index - (index % 64) + 63 - (index % 64)]);
  });

  it('dynamic_combine: sized by dynamicSharedBytes, exact in the kernel’s order', () => {
    const [blocks, threads, perBlock] = [3, 64, 200];
    const parts = sines(blocks * perBlock);
    const out = new Float32Array(blocks);
    const args = { 0: buffer(parts), 1: buffer(out), 2: scalar(perBlock) };
    expect(run(arch, 'dynamic_combine', blocks, threads, args, threads * 4)).toEqual([]);
    for (let b = 0; b < blocks; b++) {
      const partial = Array.from({ length: threads }, (_, t) => {
        let sum = 0;
        for (let k = t; k < perBlock; k += threads)
          sum = f32(sum + (parts[b * perBlock + k] as number));
        return sum;
      });
      for (let stride = threads >> 1; stride > 0; stride >>= 1)
        for (let t = 0; t < stride; t++)
          partial[t] = f32((partial[t] as number) + (partial[t + stride] as number));
      expect(out[b]).toBe(partial[0]);
    }
    // Without it the array has no bytes: every access is out of bounds.
    const findings = run(arch, 'dynamic_combine', 1, threads, args);
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.every((finding) => finding.startsWith('out-of-bounds'))).toBe(true);
  });

  it('dependent_scale: griddepcontrol (sm_90) is a no-op for one launch', () => {
    const n = 100;
    const x = sines(n);
    const out = new Float32Array(n);
    expect(
      run(arch, 'dependent_scale', 2, 64, {
        0: buffer(x),
        1: buffer(out),
        2: scalar(1.5),
        3: scalar(n),
      }),
    ).toEqual([]);
    for (let index = 0; index < n; index++)
      expect(out[index]).toBe(f32((x[index] as number) * 1.5));
  });

  it.each([0, 1, 3, 8])(
    'running_lse (n = %i): reads of never-written registers that never matter',
    (n) => {
      const x = sines(32 * Math.max(n, 1));
      const out = new Float32Array(32);
      expect(
        run(arch, 'running_lse', 1, 32, { 0: buffer(x), 1: buffer(out), 2: scalar(n) }),
      ).toEqual([]);
      for (let t = 0; t < 32; t++) {
        const row = Array.from(x.slice(t * n, t * n + n));
        const expected = n === 0 ? 0 : Math.log(row.reduce((sum, v) => sum + Math.exp(v), 0));
        expect(out[t]).toBeCloseTo(expected, 4);
      }
    },
  );

  it.each([0, 1, 3, 8])(
    'last_positive (n = %i): a selp chain over a never-written register',
    (n) => {
      const x = sines(32 * Math.max(n, 1));
      const out = new Float32Array(32);
      expect(
        run(arch, 'last_positive', 1, 32, { 0: buffer(x), 1: buffer(out), 2: scalar(n) }),
      ).toEqual([]);
      for (let t = 0; t < 32; t++) {
        const positives = Array.from(x.slice(t * n, t * n + n)).filter((v) => v > 0);
        expect(out[t]).toBe(positives.at(-1) ?? -1);
      }
    },
  );
});

function scalar(value: number): KernelArgument {
  return { kind: 'scalar', value };
}
