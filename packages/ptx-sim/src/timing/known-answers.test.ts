import { describe, expect, it } from 'vitest';
import { simulate, type KernelArgument } from '../executor/simulate.js';
import { parsePtx } from '../parser/index.js';
import { GPUS, type GpuSpec } from './gpu.js';

const H200 = GPUS['H200'] as GpuSpec;
const A100 = GPUS['A100'] as GpuSpec;
const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n';
const buffer = (bytes: Uint8Array): KernelArgument => ({ kind: 'buffer', bytes });
const scalar = (value: number): KernelArgument => ({ kind: 'scalar', value });

// One thread follows a chain of 8-byte offsets, each load's address the previous load's value.
const CHASE = `${HEADER}.visible .entry chase(.param .u64 data, .param .u32 steps) {
  .reg .b64 %rd<5>; .reg .b32 %r<3>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [data]; cvta.to.global.u64 %rd1, %rd1; ld.param.u32 %r1, [steps];
  mov.u32 %r2, 0; mov.u64 %rd2, %rd1;
$LOOP:
  ld.global.u64 %rd3, [%rd2];
  add.s64 %rd2, %rd1, %rd3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra $LOOP;
  ret;
}`;

// Each thread copies `iterations` 16-byte words, block after block of the grid: a streaming copy.
const COPY = `${HEADER}.visible .entry copy(.param .u64 src, .param .u64 dst, .param .u32 iterations) {
  .reg .b64 %rd<8>; .reg .b32 %r<12>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [src]; cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [dst]; cvta.to.global.u64 %rd2, %rd2;
  ld.param.u32 %r1, [iterations];
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x;
  mul.lo.u32 %r5, %r3, %r1; mul.lo.u32 %r5, %r5, %r4; add.u32 %r5, %r5, %r2;
  mov.u32 %r6, 0;
$LOOP:
  mul.wide.u32 %rd3, %r5, 16;
  add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
  ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd4];
  st.global.v4.u32 [%rd5], {%r7, %r8, %r9, %r10};
  add.u32 %r5, %r5, %r4; add.u32 %r6, %r6, 1;
  setp.lt.u32 %p1, %r6, %r1;
  @%p1 bra $LOOP;
  ret;
}`;

function fmaChain(length: number): string {
  const body = Array.from({ length }, () => '  fma.rn.f32 %f1, %f1, %f2, %f3;').join('\n');
  return `${HEADER}.visible .entry chain(.param .u64 out) {
  .reg .f32 %f<4>; .reg .b64 %rd<3>;
  mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f3F000000; mov.f32 %f3, 0f3E800000;
${body}
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1; st.global.f32 [%rd1], %f1;
  ret;
}`;
}

// A dependent chain through f16 halves: each step splits a word and widens its low half.
function halfChain(length: number): string {
  const step = '  mov.b32 {%h1, _}, %r1;\n  cvt.f32.f16 %f1, %h1;\n  mov.b32 %r1, %f1;';
  return `${HEADER}.visible .entry halves(.param .u64 out) {
  .reg .f32 %f<2>; .reg .b16 %h<2>; .reg .b32 %r<2>; .reg .b64 %rd<3>;
  mov.b32 %r1, 1065353216; mov.b16 %h1, 15360;
${Array.from({ length }, () => step).join('\n')}
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1; st.global.f32 [%rd1], %f1;
  ret;
}`;
}

// 60 dependent FMAs, then a load independent of them and its use: ptxas issues the load first.
const LOAD_AFTER_WORK = `${HEADER}.visible .entry late(.param .u64 data) {
  .reg .f32 %f<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [data]; cvta.to.global.u64 %rd1, %rd1;
  mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f3F000000; mov.f32 %f3, 0f3E800000;
${Array.from({ length: 60 }, () => '  fma.rn.f32 %f1, %f1, %f2, %f3;').join('\n')}
  ld.global.f32 %f4, [%rd1+4];
  add.f32 %f5, %f4, %f1;
  st.global.f32 [%rd1], %f5;
  ret;
}`;

// 8 loads 4 KB apart, each in a guarded block that copies its result into a local zeroed before
// it (how the IR's guarded loads print), then their sum: ptxas coalesces each copy with its load.
const GUARDED_LOADS = `${HEADER}.visible .entry guarded(.param .u64 data, .param .u32 live) {
  .reg .b32 %r<40>; .reg .b64 %rd<3>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [data]; cvta.to.global.u64 %rd1, %rd1; ld.param.u32 %r1, [live];
  setp.ne.u32 %p1, %r1, 0;
${Array.from({ length: 8 }, (_, i) => `  mov.b32 %r${10 + i}, 0;\n  @!%p1 bra $SKIP${i};\n  ld.global.u32 %r${20 + i}, [%rd1+${i * 4096}];\n  mov.b32 %r${10 + i}, %r${20 + i};\n$SKIP${i}:`).join('\n')}
  add.u32 %r30, %r10, %r11; add.u32 %r31, %r12, %r13; add.u32 %r32, %r14, %r15;
  add.u32 %r33, %r16, %r17; add.u32 %r34, %r30, %r31; add.u32 %r35, %r32, %r33;
  add.u32 %r36, %r34, %r35; st.global.u32 [%rd1], %r36;
  ret;
}`;

// A loop-carried prefetch: cur = next, then next's following load, then a use of cur. cur is
// read after next was written, so the two live at once: the copy is a real MOV, which waits.
const CARRIED_PREFETCH = `${HEADER}.visible .entry carried(.param .u64 data, .param .u32 steps) {
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [data]; cvta.to.global.u64 %rd1, %rd1; ld.param.u32 %r1, [steps];
  ld.global.u32 %r2, [%rd1]; mov.u32 %r4, 0; mov.u32 %r5, 0; mov.u64 %rd2, %rd1;
$LOOP:
  mov.b32 %r3, %r2;
  add.s64 %rd2, %rd2, 4096;
  ld.global.u32 %r2, [%rd2];
  add.u32 %r4, %r4, %r3;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, %r1;
  @%p1 bra $LOOP;
  st.global.u32 [%rd1], %r4;
  ret;
}`;

// One warp loads shared words `stride` bytes apart, lane by lane, `width` bytes a lane, 8 times.
function sharedLoads(stride: number, width: 4 | 8 | 16): string {
  const type = { 4: 'u32', 8: 'v2.u32', 16: 'v4.u32' }[width];
  const target = { 4: '%r5', 8: '{%r5, %r6}', 16: '{%r5, %r6, %r7, %r8}' }[width];
  const loads = Array.from({ length: 8 }, () => `  ld.shared.${type} ${target}, [%r3];`).join('\n');
  return `${HEADER}.visible .entry banks(.param .u64 out) {
  .shared .align 16 .b8 tile[8192];
  .reg .b32 %r<10>; .reg .b64 %rd<3>;
  mov.u32 %r1, %tid.x; mov.u32 %r2, tile; mad.lo.u32 %r3, %r1, ${stride}, %r2;
${loads}
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1; st.global.u32 [%rd1], %r5;
  ret;
}`;
}

describe('timing model known answers', () => {
  it('a pointer chase takes one DRAM latency a step, one round trip each', () => {
    const steps = 64;
    const data = new Uint8Array(steps * 4096 + 8);
    const view = new DataView(data.buffer);
    for (let step = 0; step < steps; step++)
      view.setBigUint64(step * 4096, BigInt((step + 1) * 4096), true);
    const result = simulate(parsePtx(CHASE), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { data: buffer(data), steps: scalar(steps) },
      timing: { gpu: H200, registers: 16 },
    });
    const estimate = result.estimate;
    if (estimate === undefined) throw new Error('no estimate');
    const cyclesPerStep = (estimate.seconds * H200.clockHz) / steps;
    expect(cyclesPerStep).toBeGreaterThan(H200.latencies.dram);
    expect(cyclesPerStep).toBeLessThan(H200.latencies.dram * 1.05);
    expect(estimate.bound).toBe('latency');
    expect(estimate.dramRoundTripsPerWarp).toBe(steps);
    expect(estimate.bytesInFlightPerSm.peak).toBe(32);
  });

  it('a dependent FMA chain issues one FMA per fp32 latency', () => {
    const length = 2048;
    const result = simulate(parsePtx(fmaChain(length)), {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: { out: buffer(new Uint8Array(4)) },
      timing: { gpu: A100, registers: 8 },
    });
    const cycles = (result.estimate?.seconds ?? 0) * A100.clockHz;
    const chain = length * A100.latencies.classes.fp32;
    expect(cycles).toBeGreaterThan(chain);
    // The chain plus the final store's trip to L2 and DRAM.
    expect(cycles).toBeLessThan(chain + A100.latencies.l2 + 100);
    expect(result.estimate?.bound).toBe('latency');
  });

  it('splitting a word into halves and copying bits back issue nothing: SASS renames them', () => {
    const cycles =
      (simulate(parsePtx(halfChain(512)), {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: { out: buffer(new Uint8Array(4)) },
        timing: { gpu: A100, registers: 8 },
      }).estimate?.seconds ?? 0) * A100.clockHz;
    const { fp16 } = A100.latencies.classes;
    // Each step is the widening (fp16) alone: the split reads the half in place, and the copy back
    // (f32 bits into the b32 the next split reads) coalesces, its source written after the split.
    expect(cycles).toBeGreaterThan(512 * fp16);
    expect(cycles).toBeLessThan(512 * fp16 + A100.latencies.l2 + 100);
  });

  it('a guarded load copied into its local does not wait: ptxas coalesces the copy', () => {
    const result = simulate(parsePtx(GUARDED_LOADS), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { data: buffer(new Uint8Array(8 * 4096)), live: scalar(1) },
      timing: { gpu: H200, registers: 40 },
    });
    const estimate = result.estimate;
    if (estimate === undefined) throw new Error('no estimate');
    const cycles = estimate.seconds * H200.clockHz;
    // All 8 loads in flight at once: one round trip, then the store's trip to L2.
    expect(estimate.dramRoundTripsPerWarp).toBe(1);
    expect(cycles).toBeGreaterThan(H200.latencies.dram);
    expect(cycles).toBeLessThan(H200.latencies.dram + H200.latencies.l2 + 200);
  });

  it('a copy whose destination is still live is a real MOV: it waits for its source', () => {
    const steps = 32;
    const result = simulate(parsePtx(CARRIED_PREFETCH), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { data: buffer(new Uint8Array((steps + 1) * 4096)), steps: scalar(steps) },
      timing: { gpu: H200, registers: 16 },
    });
    const estimate = result.estimate;
    if (estimate === undefined) throw new Error('no estimate');
    // Each step's copy waits for the load the step before issued: a round trip a step.
    const cyclesPerStep = (estimate.seconds * H200.clockHz) / steps;
    expect(estimate.dramRoundTripsPerWarp).toBeGreaterThanOrEqual(steps - 1);
    expect(cyclesPerStep).toBeGreaterThan(H200.latencies.dram);
    expect(cyclesPerStep).toBeLessThan(H200.latencies.dram * 1.1);
  });

  it('integer logic (ALU) and integer dot products (the FMA pipe) issue side by side', () => {
    // 32 warps of 512 independent instructions: ALU ops alone, or ALU ops and dp4a alternating.
    const program = (mixed: boolean) => `${HEADER}.visible .entry pipes(.param .u64 out) {
  .reg .b32 %r<16>; .reg .b64 %rd<3>;
  mov.u32 %r1, %tid.x; mov.u32 %r2, 7;
${Array.from({ length: 512 }, (_, index) => `  ${mixed && index % 2 === 1 ? 'dp4a.s32.s32' : 'and.b32'} %r${4 + (index % 8)}, %r1, %r2${mixed && index % 2 === 1 ? ', %r2' : ''};`).join('\n')}
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1; st.global.u32 [%rd1], %r4;
  ret;
}`;
    const issueCycles = (mixed: boolean) => {
      const result = simulate(parsePtx(program(mixed)), {
        grid: [1, 1, 1],
        block: [1024, 1, 1],
        args: { out: buffer(new Uint8Array(4)) },
        timing: { gpu: H200, registers: 16 },
      });
      return (result.estimate?.limits.issueSeconds ?? 0) * H200.clockHz;
    };
    // 512 · 32 warp instructions at the ALU's 2 a clock, or at 4 a clock over both pipes.
    expect(issueCycles(false)).toBeCloseTo((512 * 32) / 2, -2);
    expect(issueCycles(true)).toBeCloseTo((512 * 32) / 4, -2);
  });

  it('a streaming copy with 64 warps an SM is bound by DRAM bandwidth', () => {
    const blocks = H200.sms * 8;
    const iterations = 4;
    const bytes = blocks * 256 * iterations * 16;
    const result = simulate(parsePtx(COPY), {
      grid: [blocks, 1, 1],
      block: [256, 1, 1],
      args: {
        src: buffer(new Uint8Array(bytes)),
        dst: buffer(new Uint8Array(bytes)),
        iterations: scalar(iterations),
      },
      sampleBlocks: 4,
      timing: { gpu: H200, registers: 32 },
    });
    const estimate = result.estimate;
    if (estimate === undefined) throw new Error('no estimate');
    expect(estimate.occupancy.residentWarps).toBe(64);
    expect(estimate.bound).toBe('DRAM');
    expect(estimate.dramBytes).toBe(2 * bytes);
    // At most the sustained bandwidth, and within 5% of it.
    const sustained = H200.dramSustainedBytesPerSecond / H200.dramBytesPerSecond;
    expect(estimate.bandwidthFraction).toBeLessThanOrEqual(sustained + 1e-9);
    expect(estimate.bandwidthFraction).toBeGreaterThan(0.95 * sustained);
    expect(estimate.sampled).toBe(true);
  });

  it('the same copy with one warp an SM is bound by bytes in flight over latency', () => {
    const blocks = H200.sms;
    const iterations = 16;
    const bytes = blocks * 32 * iterations * 16;
    const result = simulate(parsePtx(COPY), {
      grid: [blocks, 1, 1],
      block: [32, 1, 1],
      args: {
        src: buffer(new Uint8Array(bytes)),
        dst: buffer(new Uint8Array(bytes)),
        iterations: scalar(iterations),
      },
      timing: { gpu: H200, registers: 32 },
    });
    const estimate = result.estimate;
    if (estimate === undefined) throw new Error('no estimate');
    expect(estimate.occupancy.residentWarps).toBe(1);
    expect(estimate.bound).toBe('latency');
    expect(estimate.bytesInFlightPerSm.peak).toBe(512);
    expect(estimate.dramRoundTripsPerWarp).toBe(iterations);
    // Little's law: 512 bytes a DRAM latency, per SM.
    const cyclesPerIteration = (estimate.seconds * H200.clockHz) / iterations;
    expect(cyclesPerIteration).toBeGreaterThan(H200.latencies.dram);
    expect(cyclesPerIteration).toBeLessThan(H200.latencies.dram * 1.15);
    const littlesLaw =
      (512 * H200.sms * H200.clockHz) / H200.latencies.dram / H200.dramBytesPerSecond;
    expect(estimate.bandwidthFraction).toBeLessThan(2 * littlesLaw);
    expect(estimate.bandwidthFraction).toBeGreaterThan(0.8 * littlesLaw);
  });

  it('a load after independent work is scheduled first, as ptxas does: the work hides in its latency', () => {
    const result = simulate(parsePtx(LOAD_AFTER_WORK), {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: { data: buffer(new Uint8Array(8)) },
      timing: { gpu: H200, registers: 16 },
    });
    const cycles = (result.estimate?.seconds ?? 0) * H200.clockHz;
    const { dram, l2 } = H200.latencies;
    // The round trip, then the store's trip to L2; in program order the 240-cycle chain comes first.
    expect(cycles).toBeGreaterThan(dram + l2);
    expect(cycles).toBeLessThan(dram + l2 + 100);
  });

  it.each([
    { stride: 128, width: 4, wavefronts: 32, minimum: 1 },
    { stride: 4, width: 4, wavefronts: 1, minimum: 1 },
    { stride: 0, width: 4, wavefronts: 1, minimum: 1 },
    { stride: 8, width: 8, wavefronts: 2, minimum: 2 },
    { stride: 16, width: 16, wavefronts: 4, minimum: 4 },
    { stride: 256, width: 16, wavefronts: 32, minimum: 4 },
  ] as const)(
    'shared loads $width bytes a lane, $stride apart: $wavefronts wavefronts each (minimum $minimum)',
    ({ stride, width, wavefronts, minimum }) => {
      const result = simulate(parsePtx(sharedLoads(stride, width)), {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: { out: buffer(new Uint8Array(4)) },
        sanitize: false,
        timing: { gpu: H200, registers: 16 },
      });
      expect(result.estimate?.sharedWavefronts).toBe(8 * wavefronts);
      expect(result.estimate?.sharedWavefrontsMinimum).toBe(8 * minimum);
    },
  );
});
