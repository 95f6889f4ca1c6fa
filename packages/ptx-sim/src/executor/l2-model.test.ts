import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { dramBytesRead, sectorEfficiency, type Counters } from './counters.js';
import { L2Cache } from './l2-cache.js';
import { simulate, type KernelArgument } from './simulate.js';

const zeros = (bytes: number): KernelArgument => ({ kind: 'buffer', bytes: new Uint8Array(bytes) });

/** A kernel `k(src, out)` whose body sees %rd1 = src, %rd2 = out, %rd3 = 4·tid.x. */
function kernel(body: readonly string[]): string {
  return [
    '.version 7.0',
    '.target sm_80',
    '.address_size 64',
    '.visible .entry k(.param .u64 src, .param .u64 out)',
    '{',
    '.reg .b32 %r<40>;',
    '.reg .f32 %f<40>;',
    '.reg .b64 %rd<10>;',
    'ld.param.u64 %rd4, [src];',
    'ld.param.u64 %rd5, [out];',
    'cvta.to.global.u64 %rd1, %rd4;',
    'cvta.to.global.u64 %rd2, %rd5;',
    'mov.u32 %r1, %tid.x;',
    'mul.wide.u32 %rd3, %r1, 4;',
    ...body,
    'ret;',
    '}',
  ].join('\n');
}

function run(
  source: string,
  threads: number,
  buffers: { src: number; out: number },
  l2Bytes?: number,
): Counters {
  const result = simulate(parsePtx(source), {
    grid: [1, 1, 1],
    block: [threads, 1, 1],
    args: { src: zeros(buffers.src), out: zeros(buffers.out) },
    ...(l2Bytes === undefined ? {} : { l2Bytes }),
  });
  expect(result.findings).toEqual([]);
  return result.counters;
}

// Every thread reads src[tid % 32] (so each warp reads all 128 bytes) and writes out[tid].
const SHARED_READ = kernel([
  'and.b32 %r2, %r1, 31;',
  'mul.wide.u32 %rd6, %r2, 4;',
  'add.s64 %rd7, %rd1, %rd6;',
  'ld.global.f32 %f1, [%rd7];',
  'add.s64 %rd8, %rd2, %rd3;',
  'st.global.f32 [%rd8], %f1;',
]);

// One warp streams 1024 bytes of src twice, 128 bytes per load, then writes its sum to out[lane].
const offsets = Array.from({ length: 8 }, (_, index) => index * 128);
const STREAM_TWICE = kernel([
  'add.s64 %rd6, %rd1, %rd3;',
  'mov.f32 %f0, 0f00000000;',
  ...[...offsets, ...offsets].flatMap((offset, index) => [
    `ld.global.f32 %f${index + 1}, [%rd6+${offset}];`,
    `add.f32 %f0, %f0, %f${index + 1};`,
  ]),
  'add.s64 %rd7, %rd2, %rd3;',
  'st.global.f32 [%rd7], %f0;',
]);

describe('the L2 model behind the DRAM counters', () => {
  it('reads a buffer every warp shares from DRAM once; without an L2 once per warp', () => {
    const cached = run(SHARED_READ, 128, { src: 128, out: 512 });
    expect(cached.buffers['src']?.bytesRead).toBe(128 * 4);
    expect(cached.buffers['src']?.sectorBytes).toBe(4 * 128);
    expect(cached.buffers['src']?.dramBytesRead).toBe(128);
    expect(cached.buffers['out']?.dramBytesRead).toBe(0);
    expect(cached.buffers['out']?.dramBytesWritten).toBe(512);
    const uncached = run(SHARED_READ, 128, { src: 128, out: 512 }, 0);
    expect(uncached.buffers['src']?.dramBytesRead).toBe(4 * 128);
    expect(uncached.buffers['out']?.dramBytesWritten).toBe(512);
    expect(dramBytesRead(uncached)).toBe(4 * 128);
    expect(dramBytesRead(uncached, ['out'])).toBe(0);
  });

  it('evicts least recently used sectors: a stream larger than L2 read twice costs twice', () => {
    const tiny = run(STREAM_TWICE, 32, { src: 1024, out: 128 }, 256);
    expect(tiny.buffers['src']?.dramBytesRead).toBe(2 * 1024);
    // Exactly the stream fits: the second pass hits every sector.
    const fits = run(STREAM_TWICE, 32, { src: 1024, out: 128 }, 1024);
    expect(fits.buffers['src']?.dramBytesRead).toBe(1024);
    // One sector short: LRU evicts each sector just before the second pass needs it.
    const short = run(STREAM_TWICE, 32, { src: 1024, out: 128 }, 1024 - 32);
    expect(short.buffers['src']?.dramBytesRead).toBe(2 * 1024);
    // The write-back of out's dirty sectors still happens once, at the end of the run.
    expect(short.buffers['out']?.dramBytesWritten).toBe(128);
  });

  it('writes a sector stored twice back once while it stays resident', () => {
    const twice = kernel([
      'add.s64 %rd6, %rd2, %rd3;',
      'st.global.u32 [%rd6], %r1;',
      'st.global.u32 [%rd6], %r1;',
      'ld.global.u32 %r3, [%rd6];',
      'add.s64 %rd7, %rd1, %rd3;',
      'st.global.u32 [%rd7], %r3;',
    ]);
    const cached = run(twice, 32, { src: 128, out: 128 });
    expect(cached.buffers['out']?.bytesWritten).toBe(2 * 128);
    expect(cached.buffers['out']?.dramBytesWritten).toBe(128);
    // A store makes the sector resident: the load after it hits.
    expect(cached.buffers['out']?.dramBytesRead).toBe(0);
    const uncached = run(twice, 32, { src: 128, out: 128 }, 0);
    expect(uncached.buffers['out']?.dramBytesWritten).toBe(2 * 128);
    expect(uncached.buffers['out']?.dramBytesRead).toBe(128);
  });

  it('resolves atomics in L2: one sector read and written back for 64 atomic adds', () => {
    const counter = kernel(['atom.global.add.u32 %r2, [%rd2], 1;', 'add.s64 %rd6, %rd1, %rd3;']);
    const counters = run(counter, 64, { src: 256, out: 4 });
    expect(counters.buffers['out']?.dramBytesRead).toBe(32);
    expect(counters.buffers['out']?.dramBytesWritten).toBe(32);
    // Atomics never took part in the L1 request counters.
    expect(counters.buffers['out']?.sectorBytes).toBe(0);
  });

  it('carries an L2 from one dispatch to the next: what the first wrote, the second reads from L2', () => {
    // Every thread copies src[tid] to out[tid]; the second dispatch reads out as its src.
    const copy = kernel([
      'add.s64 %rd6, %rd1, %rd3;',
      'ld.global.f32 %f1, [%rd6];',
      'add.s64 %rd7, %rd2, %rd3;',
      'st.global.f32 [%rd7], %f1;',
    ]);
    const module = parsePtx(copy);
    const data = zeros(4096);
    const dispatch = (l2: L2Cache | undefined, args: Record<string, KernelArgument>) =>
      simulate(module, { grid: [1, 1, 1], block: [1024, 1, 1], args, ...(l2 === undefined ? {} : { l2 }) }).counters; // prettier-ignore
    const l2 = new L2Cache(1 << 20);
    expect(dramBytesRead(dispatch(l2, { src: data, out: zeros(4096) }))).toBe(4096);
    // The same buffers at the same addresses: src and out are both resident now.
    expect(dramBytesRead(dispatch(l2, { src: data, out: zeros(4096) }))).toBe(0);
    // Other buffers (another size) behind the same addresses: the cache starts empty.
    expect(dramBytesRead(dispatch(l2, { src: zeros(8192), out: zeros(8192) }))).toBe(4096);
    // Without a carried L2 every dispatch starts cold.
    expect(dramBytesRead(dispatch(undefined, { src: data, out: zeros(4096) }))).toBe(4096);
  });

  it('rejects a negative L2 size', () => {
    expect(() => run(SHARED_READ, 32, { src: 128, out: 128 }, -1)).toThrow(/l2Bytes/);
  });
});

// Every thread reads src[(tid / 2) % 32]: lane pairs ask for the same 4 bytes, 64 bytes per warp.
const PAIRED_READ = kernel([
  'shr.u32 %r2, %r1, 1;',
  'and.b32 %r2, %r2, 31;',
  'mul.wide.u32 %rd6, %r2, 4;',
  'add.s64 %rd7, %rd1, %rd6;',
  'ld.global.f32 %f1, [%rd7];',
  'add.s64 %rd8, %rd2, %rd3;',
  'st.global.f32 [%rd8], %f1;',
]);

describe('sector efficiency', () => {
  it('counts bytes several lanes ask for once, so it is the share of fetched bytes used', () => {
    const counters = run(PAIRED_READ, 32, { src: 128, out: 128 });
    expect(counters.buffers['src']?.bytesRead).toBe(128);
    expect(counters.buffers['src']?.requestedBytes).toBe(64);
    expect(counters.buffers['src']?.sectorBytes).toBe(64);
    expect(sectorEfficiency(counters, ['src'])).toBe(1);
  });
});
