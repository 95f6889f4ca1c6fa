import { seedFromString } from '@forge/ir/kernels';
import { magnitudeLabel, scheduleLabel } from './case-labels.js';
import type { ExecutionCase, WeightTrafficBounds } from './execution-cases.js';

/**
 * q8_0-gemv gives each lane a block and asks for the three aligned 16-byte vectors holding it (a
 * block is 34 bytes, 2-byte aligned): 48 bytes per block, each vector alone in its 32-byte sector.
 * L1 serves the overlap of neighbouring lanes' windows, so DRAM still reads each weight byte once
 * (the suite's DRAM check). At the matrix's end at most two lanes ask for a clamped vector again and
 * 3 scalar words (28 bytes, 4 sectors each). With n_out odd the last warp's second row re-reads the
 * last row (from L1) and adds nothing.
 */
function q8_0TrafficBounds(nOut: number, nIn: number): WeightTrafficBounds {
  const blocks = (nOut * nIn) / 32;
  const rereadRows = (nOut + (nOut % 2)) / nOut;
  return {
    maxReadRatio: (rereadRows * (48 * blocks + 56)) / (34 * blocks),
    minSectorEfficiency: (48 * blocks) / (96 * blocks + 256),
  };
}

interface GemvOptions {
  readonly schedule?: Readonly<Record<string, number>>;
  readonly magnitude?: number;
  readonly engines?: ExecutionCase['engines'];
  /** Another draw of the same shape's random data (a new seed), named in the case. */
  readonly draw?: number;
}

function q8_0Case(nOut: number, nIn: number, options: GemvOptions = {}): ExecutionCase {
  const schedule = options.schedule ?? {};
  const magnitude = options.magnitude ?? 1;
  const draw = options.draw === undefined ? '' : ` draw=${options.draw}`;
  const name = `q8_0-gemv n_out=${nOut} n_in=${nIn} |w|,|x|<=${magnitudeLabel(magnitude)}${draw} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: 'q8_0-gemv',
    schedule,
    shape: { n_in: nIn, n_out: nOut },
    seed: seedFromString(name),
    magnitude,
    weightTraffic: q8_0TrafficBounds(nOut, nIn),
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

const N_OUTS = [1, 3, 64, 1000];
const N_INS = [32, 512, 8192];

/**
 * A single-row NMSE is one dot product's squared relative error, and an f32 dot product errs by
 * ~eps * sum |w x|: the first draws of these rows cancel to 0.8% and 0.1% of their typical size,
 * which no f32 kernel meets 1e-10 on, so they take the next well-conditioned draw (the kernel's
 * test checks every case's conditioning).
 */
const DRAWS: Readonly<Record<string, number>> = { '1x32': 3, '1x512': 2 };

/**
 * Every n_out x n_in the issue names. 1000 x 8192 (8.7 MB of blocks) takes the simulator ~16 s per
 * arch (~0.4M warp instructions/s) and the interpreter ~11 s, so only WebGPU (<1 s) runs it; the
 * CPU engines' largest are 64 x 8192 and 1000 x 512.
 */
export const Q8_0_GEMV_CASES: readonly ExecutionCase[] = [
  ...N_INS.flatMap((nIn) =>
    N_OUTS.map((nOut) => {
      const draw = DRAWS[`${nOut}x${nIn}`];
      return q8_0Case(nOut, nIn, {
        ...(nOut * nIn > 64 * 8192 ? { engines: ['webgpu'] as const } : {}),
        ...(draw === undefined ? {} : { draw }),
      });
    }),
  ),
  // Subnormal f16 scales (max|w| / 127 < 2^-14) and large ones.
  q8_0Case(64, 512, { magnitude: 1e-3 }),
  q8_0Case(64, 512, { magnitude: 1e3 }),
  // Odd block counts start every other row mid-word (the two rows of a warp at different offsets
  // in their vectors); ragged last workgroups and steps (3 and 5 of a step's 32 blocks).
  q8_0Case(200, 96, { schedule: { workgroupSize: 32 } }),
  q8_0Case(5, 160),
  q8_0Case(100, 512, { schedule: { workgroupSize: 96 } }),
  q8_0Case(64, 1024, { schedule: { workgroupSize: 256 } }),
  // 130 blocks: four full steps and a ragged one of 2.
  q8_0Case(5, 4160, { schedule: { workgroupSize: 64 } }),
  // 13 of the 16 warp row pairs are past n_out: they run every step on the last row and store nothing.
  q8_0Case(3, 512, { schedule: { workgroupSize: 256 } }),
];

const Q4_K_BLOCK = 256;

/**
 * Q4_K rows are whole 144-byte blocks, so a row starts on a 16-byte boundary, loads only its own
 * words and touches at most ceil((rowBytes + 16) / 32) sectors (one shared with a neighbour).
 */
/**
 * q4k-gemv loads a block's 16-byte header and its two 64-byte runs of qs chunks in separate
 * requests whose sectors overlap (L1 serves the second touch), so 3/4 of the requested sectors'
 * bytes are used at best; a matrix of fewer than 8 blocks, which every lane group of a step reads,
 * less. A warp streams two rows: with n_out odd the last warp's second row re-reads the last row
 * (from L1) and adds nothing.
 */
function q4kTrafficBounds(blocks: number, nOut: number): WeightTrafficBounds {
  const rereadRows = (nOut + (nOut % 2)) / nOut;
  return { maxReadRatio: 1.02 * rereadRows, minSectorEfficiency: blocks >= 8 ? 0.74 : 0.64 };
}

function q4kCase(
  nOut: number,
  nIn: number,
  options: GemvOptions & { readonly kernelId?: 'q4k-gemv' | 'q4k-swiglu-gemv' } = {},
): ExecutionCase {
  const kernelId = options.kernelId ?? 'q4k-gemv';
  const schedule = options.schedule ?? {};
  const magnitude = options.magnitude ?? 1;
  const draw = options.draw === undefined ? '' : ` draw=${options.draw}`;
  const name = `${kernelId} n_out=${nOut} n_in=${nIn} |w|,|x|<=${magnitudeLabel(magnitude)}${draw} schedule=${scheduleLabel(schedule)}`;
  // A gated warp streams one row of each matrix: no row read twice.
  const rows = kernelId === 'q4k-gemv' ? nOut : nOut + (nOut % 2);
  return {
    name,
    kernelId,
    schedule,
    shape: { n_in: nIn, n_out: nOut },
    seed: seedFromString(name),
    magnitude,
    weightTraffic: q4kTrafficBounds((nIn / Q4_K_BLOCK) * nOut, rows),
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

/** 1000 x 8192 (4.6 MB of blocks) runs on WebGPU only, to keep the CPU engines' suites fast. */
export const Q4K_GEMV_CASES: readonly ExecutionCase[] = [
  ...[256, 512, 8192].flatMap((nIn) => [1, 3, 64].map((nOut) => q4kCase(nOut, nIn))),
  q4kCase(1000, 8192, { engines: ['webgpu'] }),
  // Subnormal f16 scales and large ones.
  q4kCase(64, 512, { magnitude: 1e-3 }),
  q4kCase(64, 512, { magnitude: 1e3 }),
  // Odd block counts start every other row mid-sector; ragged last workgroups and steps (3 of a
  // step's 8 blocks, 9 blocks: a full step and 1).
  q4kCase(200, 256, { schedule: { workgroupSize: 32 } }),
  q4kCase(100, 768, { schedule: { workgroupSize: 96 } }),
  q4kCase(7, 2304, { schedule: { workgroupSize: 64 } }),
  // 13 of the 16 warp row pairs are past n_out: they run every step on the last row and store nothing.
  q4kCase(3, 512, { schedule: { workgroupSize: 256 } }),
];

/**
 * q4k-swiglu-gemv, silu(W x) · (W_up x): q4k-gemv's row step, a warp a row of both matrices, so the
 * same shapes and edges (ragged steps and workgroups, warps past n_out, f16 scale extremes).
 */
export const Q4K_SWIGLU_GEMV_CASES: readonly ExecutionCase[] = [
  ...[
    [1, 256],
    [3, 512],
    [64, 512],
    [64, 8192],
  ].map(([nOut, nIn]) => q4kCase(nOut!, nIn!, { kernelId: 'q4k-swiglu-gemv' })),
  q4kCase(1000, 8192, { kernelId: 'q4k-swiglu-gemv', engines: ['webgpu'] }),
  ...[1e-3, 1e3].map((magnitude) => q4kCase(64, 512, { kernelId: 'q4k-swiglu-gemv', magnitude })),
  ...(
    [
      [200, 256, 32],
      [100, 768, 96],
      [7, 2304, 64],
      [3, 512, 256],
    ] as const
  ).map(([nOut, nIn, workgroupSize]) =>
    q4kCase(nOut, nIn, { kernelId: 'q4k-swiglu-gemv', schedule: { workgroupSize } }),
  ),
];

/**
 * Native Q6_K blocks are 210 bytes at even offsets: a lane loads each 16-byte piece as the 3
 * aligned word pairs holding it (3 words for its 8 scale bytes), so a step asks for 316 bytes a
 * block (1.5 times the payload, from L1: DRAM reads each sector once, as the DRAM check shows), and
 * an odd n_out's last warp reads its row twice (its second row is clamped to it). A pair takes 8
 * bytes of a sector and a word 4, so a request is about a third of the sectors it touches.
 */
function q6kTrafficBounds(nOut: number): WeightTrafficBounds {
  return { maxReadRatio: (1.51 * (nOut + (nOut % 2))) / nOut, minSectorEfficiency: 0.3 };
}

function q6kCase(nOut: number, nIn: number, options: GemvOptions = {}): ExecutionCase {
  const schedule = options.schedule ?? {};
  const magnitude = options.magnitude ?? 1;
  const name = `q6k-gemv n_out=${nOut} n_in=${nIn} |w|,|x|<=${magnitudeLabel(magnitude)} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: 'q6k-gemv',
    schedule,
    shape: { n_in: nIn, n_out: nOut },
    seed: seedFromString(name),
    magnitude,
    weightTraffic: q6kTrafficBounds(nOut),
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

/** 1000 x 8192 (6.7 MB of blocks) runs on WebGPU only, to keep the CPU engines' suites fast. */
export const Q6K_GEMV_CASES: readonly ExecutionCase[] = [
  ...[256, 512, 8192].flatMap((nIn) => [1, 3, 64].map((nOut) => q6kCase(nOut, nIn))),
  q6kCase(1000, 8192, { engines: ['webgpu'] }),
  // Subnormal f16 d and large ones.
  q6kCase(64, 512, { magnitude: 1e-3 }),
  q6kCase(64, 512, { magnitude: 1e3 }),
  // Odd block counts start every other row 2 bytes into a word; steps of 8 blocks: 1, 3 and 7
  // blocks leave lanes idle, 9 and 18 end in a ragged step; ragged last workgroups; odd n_out
  // leaves a warp's second row past it. (Workgroup sizes within the PTX bounds, 32 to 256.)
  q6kCase(200, 256, { schedule: { workgroupSize: 32 } }),
  q6kCase(100, 768, { schedule: { workgroupSize: 96 } }),
  q6kCase(5, 4608, { schedule: { workgroupSize: 192 } }),
  q6kCase(7, 1792, { schedule: { workgroupSize: 64 } }),
  q6kCase(7, 2304, { schedule: { workgroupSize: 32 } }),
  // 13 of the 16 warp row pairs are past n_out: they run every step on the last row and store nothing.
  q6kCase(3, 512, { schedule: { workgroupSize: 256 } }),
];

function q6kSoaCase(nOut: number, nIn: number, options: GemvOptions = {}): ExecutionCase {
  const schedule = options.schedule ?? {};
  const magnitude = options.magnitude ?? 1;
  const draw = options.draw === undefined ? '' : ` draw=${options.draw}`;
  const name = `q6k-soa-gemv n_out=${nOut} n_in=${nIn} |w|,|x|<=${magnitudeLabel(magnitude)}${draw} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: 'q6k-soa-gemv',
    schedule,
    shape: { n_in: nIn, n_out: nOut },
    seed: seedFromString(name),
    magnitude,
    // Repacked rows start on sectors and the kernel loads no padding: the full bar from 2 blocks a
    // row; with one, its 16 scale bytes and 2 d bytes share a sector but come in two requests.
    weightTraffic: { maxReadRatio: 1.02, minSectorEfficiency: nIn === 256 ? 0.8 : 0.9 },
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

/** 1000 x 8192 (6.7 MB of blocks) runs on WebGPU only, to keep the CPU engines' suites fast. */
export const Q6K_SOA_GEMV_CASES: readonly ExecutionCase[] = [
  ...[256, 512, 8192].flatMap((nIn) => [1, 3, 64].map((nOut) => q6kSoaCase(nOut, nIn))),
  q6kSoaCase(1000, 8192, { engines: ['webgpu'] }),
  // Subnormal f16 d and large ones.
  q6kSoaCase(64, 512, { magnitude: 1e-3 }),
  q6kSoaCase(64, 512, { magnitude: 1e3 }),
  // Steps of 8 blocks: 1, 3 and 7 blocks leave lanes idle, 9 and 18 end in a ragged step; ragged
  // last workgroups; odd n_out leaves a warp's second row past it. (Workgroup sizes within the PTX
  // bounds, 32 to 256, so each case runs on every engine.)
  q6kSoaCase(200, 256, { schedule: { workgroupSize: 64 } }),
  q6kSoaCase(100, 768, { schedule: { workgroupSize: 192 } }),
  q6kSoaCase(5, 4608, { schedule: { workgroupSize: 96 } }),
  q6kSoaCase(7, 1792, { schedule: { workgroupSize: 32 } }),
  q6kSoaCase(7, 2304, { schedule: { workgroupSize: 64 } }),
  // 13 of the 16 warp row pairs are past n_out: they run every step on the last row and store nothing.
  q6kSoaCase(3, 512, { schedule: { workgroupSize: 256 } }),
];
