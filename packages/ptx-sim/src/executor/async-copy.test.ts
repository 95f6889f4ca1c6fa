import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from '../parser/index.js';
import { GPUS, type GpuSpec } from '../timing/gpu.js';
import { sectorEfficiency } from './counters.js';
import { simulate, type KernelArgument } from './simulate.js';

// cp-async.sm_80.ptx is `nvcc -ptx -O3 -arch=sm_80 cp-async.cu` (CUDA 13.0), checked in so the test
// needs no nvcc: cp.async.cg / .ca (with constant src-sizes), commit_group and wait_group.
const fixture = parsePtx(
  readFileSync(new URL('../fixtures/cp-async.sm_80.ptx', import.meta.url), 'utf8'),
);
const H200 = GPUS['H200'] as GpuSpec;
const buffer = (bytes: Uint8Array): KernelArgument => ({ kind: 'buffer', bytes });
const scalar = (value: number): KernelArgument => ({ kind: 'scalar', value });

function streamCopy(stages: 1 | 4, blocks: number, threads: number, n: number, timed = false) {
  const src = new Float32Array(n * 4).map((_, index) => Math.sin(index) * 100);
  const dst = new Float32Array(n * 4);
  const entry = `stream_copy_${stages}`;
  const result = simulate(fixture, {
    entry,
    grid: [blocks, 1, 1],
    block: [threads, 1, 1],
    args: {
      [`${entry}_param_0`]: buffer(new Uint8Array(src.buffer)),
      [`${entry}_param_1`]: buffer(new Uint8Array(dst.buffer)),
      [`${entry}_param_2`]: scalar(n),
    },
    ...(timed ? { timing: { gpu: H200, registers: 32 } } : {}),
  });
  return { src, dst, result, entry };
}

describe('cp.async compiled by nvcc', () => {
  it.each([1, 4] as const)(
    'a streaming copy through %i shared stage(s) computes what the CUDA code says, no findings',
    (stages) => {
      const n = 3 * 64 * 5 + 18;
      const { src, dst, result, entry } = streamCopy(stages, 3, 64, n);
      expect(result.findings).toEqual([]);
      expect([...dst]).toEqual([...src].map((value) => Math.fround(value * 2)));
      // Each source byte is read once, in whole sectors.
      expect(result.counters.buffers[`${entry}_param_0`]?.bytesRead).toBe(n * 16);
      expect(sectorEfficiency(result.counters, [`${entry}_param_0`])).toBe(1);
      expect(result.counters.warpInstructions['cp.async']).toBeGreaterThan(0);
    },
  );

  it('a copy with a src-size below cp-size zero-fills the rest and reads nothing past it', () => {
    const bytes = 37;
    const src = new Uint8Array(bytes).map((_, index) => index + 1);
    const dst = new Uint8Array(64 * 8);
    const result = simulate(fixture, {
      entry: 'tail_copy',
      grid: [1, 1, 1],
      block: [64, 1, 1],
      args: { tail_copy_param_0: buffer(src), tail_copy_param_1: buffer(dst), tail_copy_param_2: scalar(bytes) }, // prettier-ignore
    });
    // src holds exactly `bytes`: a read past it would be an out-of-bounds finding.
    expect(result.findings).toEqual([]);
    const tile = new Uint8Array(64 * 8).map((_, index) => (index < bytes ? index + 1 : 0));
    const reversed = Array.from({ length: 64 }, (_, t) => [...tile.slice((63 - t) * 8, (64 - t) * 8)]); // prettier-ignore
    expect([...dst]).toEqual(reversed.flat());
  });

  it('reading shared bytes before a wait covers their copy is an async-copy-race finding', () => {
    const result = simulate(fixture, {
      entry: 'early_read',
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: { early_read_param_0: buffer(new Uint8Array(512)), early_read_param_1: buffer(new Uint8Array(512)) }, // prettier-ignore
    });
    expect(result.findings.map(({ category }) => category)).toEqual(['async-copy-race']);
    expect(result.findings[0]?.instruction).toMatch(/^ld\.shared/);
    expect(result.findings[0]?.message).toMatch(/cp\.async of thread 0 may still be writing/);
  });
});

const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n';
// Thread t copies 16 bytes of src at 16t into the tile with `operand` as the fourth operand, then
// writes the tile back out.
const handCopy = (copy: string, wait = 'cp.async.wait_all;') => `${HEADER}
.visible .entry hand(.param .u64 src, .param .u64 dst, .param .u32 limit) {
  .shared .align 16 .b8 tile[512];
  .reg .b64 %rd<6>; .reg .b32 %r<10>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u32 %r1, [limit];
  mov.u32 %r2, %tid.x; shl.b32 %r3, %r2, 4;
  mov.u32 %r4, tile; add.u32 %r5, %r4, %r3;
  cvt.u64.u32 %rd3, %r3; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
  sub.u32 %r6, %r1, %r3; min.u32 %r6, %r6, 16; setp.ge.u32 %p1, %r3, %r1;
  ${copy}
  ${wait}
  ld.shared.v4.u32 {%r7, %r8, %r9, %r2}, [%r5];
  st.global.v4.u32 [%rd5], {%r7, %r8, %r9, %r2};
  ret;
}`;

function runHand(copy: string, limit: number, wait?: string) {
  const src = new Uint8Array(512).map((_, index) => (index % 251) + 1);
  const dst = new Uint8Array(512);
  const result = simulate(parsePtx(handCopy(copy, wait)), {
    grid: [1, 1, 1],
    block: [32, 1, 1],
    args: { src: buffer(src), dst: buffer(dst), limit: scalar(limit) },
  });
  return { src, dst, findings: result.findings };
}

describe('cp.async forms', () => {
  it('src-size from a register: the bytes before it copied, zeros after', () => {
    const limit = 100;
    const { src, dst, findings } = runHand('@!%p1 cp.async.cg.shared.global [%r5], [%rd4], 16, %r6;', limit); // prettier-ignore
    expect(findings).toEqual([]);
    // Threads past the limit skip the copy; shared memory starts zeroed.
    expect([...dst]).toEqual([...src].map((value, index) => (index < limit ? value : 0)));
  });

  it('ignore-src: a true predicate writes zeros instead of reading', () => {
    const { src, dst, findings } = runHand('cp.async.ca.shared.global [%r5], [%rd4], 16, %p1;', 64);
    expect(findings).toEqual([]);
    expect([...dst]).toEqual([...src].map((value, index) => (index < 64 ? value : 0)));
  });

  it('wait_group 0 after a commit covers every copy: no finding', () => {
    const { findings } = runHand(
      'cp.async.ca.shared.global [%r5], [%rd4], 16;',
      512,
      'cp.async.commit_group; cp.async.wait_group 0;',
    );
    expect(findings).toEqual([]);
  });

  it('a wait with no commit before it leaves the copy pending: a finding', () => {
    const { findings } = runHand('cp.async.ca.shared.global [%r5], [%rd4], 16;', 512, 'cp.async.wait_group 0;'); // prettier-ignore
    expect(findings.map(({ category }) => category)).toEqual(['async-copy-race']);
  });

  it('a misaligned source is a finding, and the copy does not happen', () => {
    const { dst, findings } = runHand('cp.async.ca.shared.global [%r5], [%rd4+4], 16;', 512);
    expect(findings.map(({ category }) => category)).toEqual(['misaligned']);
    expect(dst.every((value) => value === 0)).toBe(true);
  });

  it.each([
    ['cp.async.cg.shared.global [%r5], [%rd4], 8;', /cp\.async\.cg copies 16 bytes/],
    ['cp.async.ca.shared.global [%r5], [%rd4], 12;', /copies 4, 8 or 16 bytes/],
    ['cp.async.ca.shared.global [%r5], [%rd4], 8, 9;', /src-size 9 is larger than cp-size 8/],
    ['cp.async.ca.shared.local [%r5], [%rd4], 8;', /unsupported modifier \.local/],
    ['cp.async.ca.global [%r5], [%rd4], 8;', /name both state spaces/],
  ])('rejects %s', (copy, message) => {
    expect(() => runHand(copy, 512)).toThrow(PtxSyntaxError);
    expect(() => runHand(copy, 512)).toThrow(message);
  });

  it('rejects a wait_group without its count', () => {
    expect(() => runHand('cp.async.ca.shared.global [%r5], [%rd4], 16;', 512, 'cp.async.wait_group;')).toThrow(/takes one constant/); // prettier-ignore
  });
});

describe('cp.async on the timing model', () => {
  // One warp an SM streams 16 iterations: each issues a copy, then waits for the one it issued 3
  // iterations before (4 stages) or for that copy itself (1 stage).
  const perSm = (stages: 1 | 4) => {
    const iterations = 16;
    const { result } = streamCopy(stages, H200.sms, 32, H200.sms * 32 * iterations, true);
    const estimate = result.estimate;
    if (estimate === undefined) throw new Error('no estimate');
    return { estimate, cyclesPerIteration: (estimate.seconds * H200.clockHz) / iterations };
  };

  it('one stage: a DRAM round trip an iteration, 512 bytes in flight (Little’s law)', () => {
    const { estimate, cyclesPerIteration } = perSm(1);
    expect(estimate.bound).toBe('latency');
    expect(estimate.bytesInFlightPerSm.peak).toBe(512);
    expect(estimate.dramRoundTripsPerWarp).toBe(16);
    // The round trip, then the shared read, the math and the store's issue.
    expect(cyclesPerIteration).toBeGreaterThan(H200.latencies.dram);
    expect(cyclesPerIteration).toBeLessThan(H200.latencies.dram * 1.25);
  });

  it('four stages: four copies in flight a thread at each wait, so four times the bytes', () => {
    const one = perSm(1);
    const four = perSm(4);
    expect(four.estimate.bytesInFlightPerSm.peak).toBe(4 * 512);
    // A wait every 4 iterations finds its copy still in flight: 16 / 4 round trips.
    expect(four.estimate.dramRoundTripsPerWarp).toBe(4);
    // Under 4x: the pipeline's fill and drain, and each iteration's own work, do not overlap.
    const speedup = one.cyclesPerIteration / four.cyclesPerIteration;
    expect(speedup).toBeGreaterThan(2.8);
    expect(speedup).toBeLessThan(4);
  });
});
