import { describe, expect, it } from 'vitest';
import {
  estimate,
  estimateSequence,
  formatEstimate,
  GPUS,
  type GpuSpec,
  type LaunchShape,
  type SequencePart,
} from './cost-model.js';
import { parsePtx } from './parser/index.js';
import { simulate } from './executor/simulate.js';
import type { Counters } from './executor/counters.js';

const gpu = (name: string): GpuSpec => {
  const spec = GPUS[name];
  if (spec === undefined) throw new Error(`no GPU ${name}`);
  return spec;
};

/** A kernel of one thread per element: `body` turns %f1 (in[i]) into %f1, stored to out[i]. */
function kernel(body: readonly string[]): string {
  return [
    '.version 8.0',
    '.target sm_80',
    '.address_size 64',
    '.visible .entry k(.param .u64 src, .param .u64 dst)',
    '{',
    '.reg .b32 %r<4>;',
    '.reg .f32 %f<4>;',
    '.reg .b64 %rd<6>;',
    'ld.param.u64 %rd1, [src];',
    'ld.param.u64 %rd2, [dst];',
    'mov.u32 %r1, %ctaid.x;',
    'mov.u32 %r2, %ntid.x;',
    'mov.u32 %r3, %tid.x;',
    'mad.lo.s32 %r1, %r1, %r2, %r3;',
    'mul.wide.u32 %rd3, %r1, 4;',
    'add.s64 %rd4, %rd1, %rd3;',
    'add.s64 %rd5, %rd2, %rd3;',
    'ld.global.f32 %f1, [%rd4];',
    ...body,
    'st.global.f32 [%rd5], %f1;',
    'ret;',
    '}',
  ].join('\n');
}

function run(source: string, launch: LaunchShape): Counters {
  const elements = launch.grid[0] * launch.block[0];
  const result = simulate(parsePtx(source), {
    ...launch,
    args: {
      src: { kind: 'buffer', bytes: new Uint8Array(elements * 4) },
      dst: { kind: 'buffer', bytes: new Uint8Array(elements * 4) },
    },
  });
  expect(result.findings).toEqual([]);
  return result.counters;
}

const CHAIN = 64;
const fmaChain = kernel(Array.from({ length: CHAIN }, () => 'fma.rn.f32 %f1, %f1, %f1, %f1;'));
const mufuChain = kernel(Array.from({ length: CHAIN }, () => 'ex2.approx.f32 %f1, %f1;'));

describe('cost model', () => {
  it('a pure copy is DRAM-bound at the table bandwidth on every GPU', () => {
    const launch: LaunchShape = { grid: [264, 1, 1], block: [256, 1, 1] };
    const counters = run(kernel([]), launch);
    const bytes = 264 * 256 * 4;
    for (const spec of Object.values(GPUS)) {
      const result = estimate(counters, launch, spec);
      expect(result.bound).toBe('DRAM');
      // Every input byte read from DRAM once and every output byte written back once.
      expect(result.memorySeconds).toBe((2 * bytes) / spec.dramBytesPerSecond);
      expect(result.seconds).toBe(result.memorySeconds);
      expect(result.bandwidthFraction).toBeCloseTo(1, 12);
      expect(result.issueSeconds).toBeLessThan(result.memorySeconds);
    }
  });

  it('a dependent FMA chain issues at the FP32 rate: 2 warp instructions/clk/SM on A100, 4 on H200', () => {
    const launch: LaunchShape = { grid: [132, 1, 1], block: [128, 1, 1] };
    const counters = run(fmaChain, launch);
    expect(counters.warpInstructionsByClass.fp32).toBe(132 * 4 * CHAIN);
    const a100 = estimate(counters, launch, gpu('A100'));
    // 132 blocks on 108 SMs: the busiest SM runs 2 blocks of 4 warps, 64 FMAs each, at 2 per clock.
    expect(a100.bound).toBe('fp32');
    expect(a100.blocksPerSm).toBe(2);
    expect(a100.issueSeconds).toBeCloseTo((2 * 4 * CHAIN) / 2 / 1.41e9, 18);
    const h200 = estimate(counters, launch, gpu('H200'));
    // FP32 at 4 per clock equals the four schedulers: every instruction of the SM's one block counts.
    const perBlock = Object.values(counters.warpInstructionsByClass).reduce((a, b) => a + b) / 132;
    expect(h200.bound).toBe('issue');
    expect(h200.issueSeconds).toBeCloseTo(perBlock / 4 / 1.98e9, 18);
    expect(h200.seconds).toBe(h200.issueSeconds);
    expect(h200.bandwidthFraction).toBeLessThan(1);
  });

  it('an ex2 chain is bound by the special-function units at 16 lanes/clk/SM', () => {
    const launch: LaunchShape = { grid: [132, 1, 1], block: [128, 1, 1] };
    const counters = run(mufuChain, launch);
    expect(counters.warpInstructionsByClass.sfu).toBe(132 * 4 * CHAIN);
    const result = estimate(counters, launch, gpu('H100'));
    expect(result.bound).toBe('sfu');
    expect(result.issueSeconds).toBeCloseTo((4 * CHAIN) / 0.5 / 1.98e9, 18);
  });

  it('a grid smaller than the SM count occupies only that many SMs; one more wave doubles the time', () => {
    const block: LaunchShape['block'] = [128, 1, 1];
    const spec = gpu('H200');
    const small = estimate(
      run(fmaChain, { grid: [10, 1, 1], block }),
      { grid: [10, 1, 1], block },
      spec,
    );
    const full = estimate(
      run(fmaChain, { grid: [132, 1, 1], block }),
      { grid: [132, 1, 1], block },
      spec,
    );
    const over = estimate(
      run(fmaChain, { grid: [133, 1, 1], block }),
      { grid: [133, 1, 1], block },
      spec,
    );
    expect(small.activeSms).toBe(10);
    expect(full.activeSms).toBe(132);
    expect(small.issueSeconds).toBeCloseTo(full.issueSeconds, 18);
    expect(over.blocksPerSm).toBe(2);
    expect(over.issueSeconds).toBeCloseTo(2 * full.issueSeconds, 18);
  });

  it('a one-warp block uses one of the four schedulers', () => {
    const spec = gpu('H200');
    const wide = { grid: [132, 1, 1], block: [128, 1, 1] } as const;
    const narrow = { grid: [528, 1, 1], block: [32, 1, 1] } as const;
    // Same work per SM (4 warps), but 4 one-warp blocks run resident together, so all schedulers work.
    const a = estimate(run(fmaChain, wide), wide, spec);
    const b = estimate(run(fmaChain, narrow), narrow, spec);
    expect(b.schedulersUsed).toBe(4);
    expect(b.issueSeconds).toBeCloseTo(a.issueSeconds, 18);
    const lone = { grid: [132, 1, 1], block: [32, 1, 1] } as const;
    const c = estimate(run(fmaChain, lone), lone, spec);
    expect(c.schedulersUsed).toBe(1);
    expect(c.issueSeconds).toBeCloseTo(a.issueSeconds, 18);
  });

  it('formats one line', () => {
    const launch: LaunchShape = { grid: [264, 1, 1], block: [256, 1, 1] };
    expect(formatEstimate(estimate(run(kernel([]), launch), launch, gpu('H200')))).toMatch(
      /^estimate H200: [\d.]+ µs \(issue [\d.]+ µs, memory [\d.]+ µs\), 100% of DRAM bandwidth, DRAM-bound on 132 SMs$/,
    );
  });
});

/** A launch's counters with its grid and block, as a sequence part. */
function part(source: string, launch: LaunchShape): SequencePart {
  return { ...launch, counters: run(source, launch) };
}

/** DRAM bytes read and written over every buffer. */
const dramBytes = (counters: Counters): number =>
  Object.values(counters.buffers).reduce(
    (sum, traffic) => sum + traffic.dramBytesRead + traffic.dramBytesWritten,
    0,
  );

describe('cost model for a sequence of launches', () => {
  const copy = part(kernel([]), { grid: [264, 1, 1], block: [256, 1, 1] });
  // A compute-heavy second dispatch on a grid of its own: 10 blocks, each on an SM of its own.
  const chain = part(fmaChain, { grid: [10, 1, 1], block: [128, 1, 1] });

  it('a sequence of one is that launch’s estimate', () => {
    for (const spec of Object.values(GPUS)) {
      const single = estimate(copy.counters, copy, spec);
      expect(estimateSequence([copy], spec)).toEqual({
        ...single,
        dispatches: [single],
        dominant: 0,
      });
    }
    expect(() => estimateSequence([], gpu('H200'))).toThrow(RangeError);
  });

  it('two dispatches add, each on its own grid, with the longer one’s bound', () => {
    const spec = gpu('A100');
    const first = estimate(copy.counters, copy, spec);
    const second = estimate(chain.counters, chain, spec);
    expect(first.bound).toBe('DRAM');
    expect(second.bound).toBe('fp32');
    const both = estimateSequence([copy, chain], spec);
    expect(both.dispatches).toEqual([first, second]);
    expect(both.seconds).toBeCloseTo(first.seconds + second.seconds, 18);
    expect(both.issueSeconds).toBeCloseTo(first.issueSeconds + second.issueSeconds, 18);
    expect(both.memorySeconds).toBeCloseTo(first.memorySeconds + second.memorySeconds, 18);
    const bytes = dramBytes(copy.counters) + dramBytes(chain.counters);
    expect(both.bandwidthFraction).toBeCloseTo(bytes / both.seconds / spec.dramBytesPerSecond, 12);
    const longer = first.seconds >= second.seconds ? 0 : 1;
    expect(both.dominant).toBe(longer);
    expect(both.bound).toBe(longer === 0 ? 'DRAM' : 'fp32');
    expect(both.activeSms).toBe(longer === 0 ? 108 : 10);
    // The chain spread over the copy's 264 blocks (one merged result) would take less time.
    const spread = estimate(chain.counters, copy, spec);
    expect(spread.issueSeconds).toBeLessThan(second.issueSeconds);
    expect(formatEstimate(both)).toMatch(
      /; 2 dispatches: [\d.]+ µs DRAM-bound \+ [\d.]+ µs fp32-bound$/,
    );
  });

  it('a tiny second dispatch barely moves a DRAM-bound first', () => {
    const big = part(kernel([]), { grid: [1056, 1, 1], block: [256, 1, 1] });
    const tiny = part(kernel([]), { grid: [1, 1, 1], block: [32, 1, 1] });
    for (const spec of Object.values(GPUS)) {
      const alone = estimate(big.counters, big, spec);
      const both = estimateSequence([big, tiny], spec);
      expect(both.bound).toBe('DRAM');
      expect(both.dominant).toBe(0);
      expect(both.seconds).toBeGreaterThan(alone.seconds);
      // One warp's ~20 instructions on one scheduler: ~10 ns against the copy's ~1 µs.
      expect(both.seconds).toBeLessThan(1.02 * alone.seconds);
      expect(both.bandwidthFraction).toBeGreaterThan(0.98);
    }
  });
});
