import { typeBytes, type PtxModule } from '../ast.js';
import { SimulationInputError } from '../errors.js';
import { SIMULATOR_LIMITS, overLimit } from '../limits.js';
import { compileEntry, initialBytes, type Program } from './compile.js';
import { emptyCounters, totalWarpInstructions, type Counters } from './counters.js';
import { allocateCtaResources, runCta } from './cta.js';
import { FindingLog, type Finding } from './findings.js';
import { DEFAULT_L2_BYTES, L2Cache } from './l2-cache.js';
import { GlobalMemory, writeBits } from './memory.js';
import type { SimulationState } from './state.js';
import { TraceRecorder } from './trace.js';
import { scaleSample } from '../sample.js';
import { estimateLaunch, type Estimate } from '../timing/estimate.js';
import type { GpuSpec } from '../timing/gpu.js';
import { instructionTimings } from '../timing/instruction-timing.js';
import { occupancy, type Occupancy } from '../timing/occupancy.js';

/** The GPU a run is timed on, and the registers ptxas gave each thread (by entry for a module of several). */
export interface TimingOptions {
  readonly gpu: GpuSpec;
  readonly registers: number | Readonly<Record<string, number>>;
}

/** What a kernel parameter receives. */
export type KernelArgument =
  /** A global buffer holding these bytes (written in place); the parameter gets its address. */
  | { readonly kind: 'buffer'; readonly bytes: Uint8Array }
  /** A scalar of the parameter's own type. */
  | { readonly kind: 'scalar'; readonly value: number | bigint }
  /** Raw bytes for a `.b8` array parameter (or any parameter), exactly its size. */
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array };

/**
 * How simulate runs a kernel: the grid in CTAs and the block in threads (three positive integers
 * each, at most 1024 threads a block), one argument per parameter, and the sanitizer, step-budget
 * and L2 settings.
 */
export interface SimulateOptions {
  /** Entry to run; defaults to the module's only entry. */
  readonly entry?: string;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  /** One argument per kernel parameter, by parameter name. */
  readonly args: Readonly<Record<string, KernelArgument>>;
  /** The sanitizer is on unless this is false. */
  readonly sanitize?: boolean;
  /**
   * Thread instructions before the run is stopped as endless (default 2e9,
   * SIMULATOR_LIMITS.threadInstructions). A warp instruction no lane executes (all guarded off)
   * counts as one, and so does each warp's end of the body; each block's start counts one a
   * register a warp and one per 32 bytes of shared memory (resetting them). So every launch,
   * however large its grid, is bounded.
   */
  readonly maxThreadInstructions?: number;
  /** Capacity of the modeled L2 for the DRAM counters (default 4 MiB); 0 sends every access to DRAM. */
  readonly l2Bytes?: number;
  /**
   * The L2 an earlier dispatch of the same launch ran on (`new L2Cache(bytes)` for the first):
   * sectors it left, such as a scratch buffer it wrote, are hits here, as on the GPU. `l2Bytes` is
   * then the given cache's.
   */
  readonly l2?: L2Cache;
  /**
   * Bytes of dynamic shared memory (the launch's third `<<<…>>>` argument), which `.extern .shared`
   * arrays share; default 0, so an access to them is an out-of-bounds finding until it is given.
   */
  readonly dynamicSharedBytes?: number;
  /**
   * Run only this many of the grid's blocks (the first `sampleBlocks - 1` in launch order, x
   * fastest, and the last), for an estimate of a grid too large to simulate whole.
   */
  readonly sampleBlocks?: number;
  /**
   * Time the launch on a GPU model (`result.estimate`): the blocks the busiest SM runs (or every
   * sampled block) are traced and replayed by the timing model.
   */
  readonly timing?: TimingOptions;
}

/** What a sampled run measured, for `scaleSample`. */
export interface BlockSample {
  /** Blocks simulated, out of the grid's. */
  readonly blocks: number;
  /** Warp instructions each simulated block issued, in the order run (equal for identical work). */
  readonly warpInstructions: readonly number[];
  /** Per buffer, DRAM bytes read by the first block: its misses include what every block shares. */
  readonly firstBlockDramBytesRead: Readonly<Record<string, number>>;
}

/**
 * Most dynamic shared memory a block may ask for on any architecture (sm_90: 227 KiB), static
 * shared memory included (SIMULATOR_LIMITS.sharedBytesPerBlock).
 */
export const MAX_DYNAMIC_SHARED_BYTES = SIMULATOR_LIMITS.sharedBytesPerBlock;

/**
 * What a simulate run found and counted. Findings are returned, not thrown: a run that completes
 * can still have found bugs, so check that `findings` is empty.
 */
export interface SimulationResult {
  readonly findings: readonly Finding[];
  readonly counters: Counters;
  /** Wall time of the run in milliseconds. */
  readonly milliseconds: number;
  /** The launch that ran. */
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  /** Present when `sampleBlocks` left blocks out. */
  readonly sample?: BlockSample;
  /** The timing model's estimate, when the run was timed (`timing`). */
  readonly estimate?: Estimate;
}

const f32 = new DataView(new ArrayBuffer(8));

function scalarBits(value: number | bigint, type: string, bytes: number): number | bigint {
  if (type === 'f32') {
    f32.setFloat32(0, Number(value));
    return f32.getUint32(0);
  }
  if (type === 'f64') {
    f32.setFloat64(0, Number(value));
    return f32.getBigUint64(0);
  }
  const big = BigInt.asUintN(
    bytes * 8,
    typeof value === 'bigint' ? value : BigInt(Math.trunc(value)),
  );
  return bytes === 8 ? big : Number(big);
}

/** Whether an integer parameter can hold the value, read as signed or unsigned (floats always can). */
function fitsInteger(value: number | bigint, type: string, bytes: number): boolean {
  if (type.startsWith('f')) return true;
  if (typeof value === 'number' && !Number.isFinite(value)) return false;
  const big = typeof value === 'bigint' ? value : BigInt(Math.trunc(value));
  const bits = BigInt(bytes * 8);
  return big >= -(1n << (bits - 1n)) && big < 1n << bits;
}

/**
 * Runs a kernel of a parsed module on the CPU: every CTA of the grid, warps of 32 lanes, with the
 * sanitizer's findings and the memory counters. Buffers passed as arguments are updated in place.
 */
export function simulate(module: PtxModule, options: SimulateOptions): SimulationResult {
  const started = performance.now();
  const entryName =
    options.entry ?? (module.entries.length === 1 ? module.entries[0]?.name : undefined);
  if (entryName === undefined)
    throw new SimulationInputError(
      `the module has ${module.entries.length} entries; name one (${module.entries.map((entry) => entry.name).join(', ')})`,
    );
  for (const dims of [options.grid, options.block]) {
    if (dims.length !== 3 || dims.some((value) => !Number.isInteger(value) || value < 1))
      throw new SimulationInputError(
        `grid and block need three positive integers, got ${dims.join(',')}`,
      );
  }
  const l2Bytes = options.l2Bytes ?? DEFAULT_L2_BYTES;
  if (!Number.isInteger(l2Bytes) || l2Bytes < 0)
    throw new SimulationInputError(`l2Bytes must be a non-negative integer, got ${l2Bytes}`);
  const dynamicShared = options.dynamicSharedBytes ?? 0;
  if (
    !Number.isInteger(dynamicShared) ||
    dynamicShared < 0 ||
    dynamicShared > MAX_DYNAMIC_SHARED_BYTES
  )
    throw new SimulationInputError(
      `dynamicSharedBytes must be an integer in [0, ${MAX_DYNAMIC_SHARED_BYTES}], got ${dynamicShared}`,
    );
  const limit = options.maxThreadInstructions ?? SIMULATOR_LIMITS.threadInstructions;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new SimulationInputError(
      `maxThreadInstructions must be a positive integer, got ${limit}`,
    );
  if (
    options.sampleBlocks !== undefined &&
    (!Number.isSafeInteger(options.sampleBlocks) || options.sampleBlocks < 2)
  )
    throw new SimulationInputError(
      `sampleBlocks must be an integer of at least 2, got ${options.sampleBlocks}`,
    );
  const threads = options.block[0] * options.block[1] * options.block[2];
  if (threads > 1024) throw new SimulationInputError(`a block of ${threads} threads exceeds 1024`);

  const global = new GlobalMemory();
  const globalAddresses = new Map<string, number>();
  for (const variable of module.variables) {
    if (variable.space === 'global' || variable.space === 'const')
      globalAddresses.set(variable.name, global.allocate(variable.name, initialBytes(variable)));
  }
  const program: Program = compileEntry(
    module,
    entryName,
    (name) => globalAddresses.get(name) ?? 0,
    dynamicShared,
  );
  const warps = Math.ceil(threads / 32);
  const registerValues = program.registerCount * 32 * warps;
  if (registerValues > SIMULATOR_LIMITS.registerValuesPerBlock)
    throw new SimulationInputError(
      `entry ${entryName} uses ${program.registerCount} registers; a block of ${warps} warp(s) holds ${registerValues} register values, ${overLimit('registerValuesPerBlock')}: launch fewer threads a block`,
    );
  const required = program.entry.requiredThreads;
  if (
    required !== undefined &&
    required.some(
      (value, axis) =>
        value !== options.block[axis] && !(value === 1 && options.block[axis] === undefined),
    )
  ) {
    throw new SimulationInputError(
      `entry ${entryName} requires a block of ${required.join(',')} (.reqntid), got ${options.block.join(',')}`,
    );
  }

  const paramBytes = new Uint8Array(Math.max(program.paramBytes, 1));
  const params = new DataView(paramBytes.buffer);
  const names = program.params.map(({ declaration }) => declaration.name);
  for (const name of Object.keys(options.args)) {
    if (!names.includes(name))
      throw new SimulationInputError(
        `unknown parameter '${name}' (parameters: ${names.join(', ') || 'none'})`,
      );
  }
  const bufferNames: string[] = [];
  for (const { declaration, offset, size } of program.params) {
    // Own properties only: a parameter named `constructor` must not find Object's.
    const argument = Object.hasOwn(options.args, declaration.name)
      ? options.args[declaration.name]
      : undefined;
    if (argument === undefined)
      throw new SimulationInputError(
        `missing argument for parameter '${declaration.name}' (.${declaration.type}${declaration.length === undefined ? '' : `[${declaration.length}]`})`,
      );
    if (argument.kind === 'buffer') {
      if (size !== 8)
        throw new SimulationInputError(
          `parameter '${declaration.name}' is .${declaration.type}, not a 64-bit address`,
        );
      writeBits(params, offset, 8, BigInt(global.allocate(declaration.name, argument.bytes)));
      bufferNames.push(declaration.name);
    } else if (argument.kind === 'bytes') {
      if (argument.bytes.byteLength !== size)
        throw new SimulationInputError(
          `parameter '${declaration.name}' takes ${size} bytes, got ${argument.bytes.byteLength}`,
        );
      paramBytes.set(argument.bytes, offset);
    } else {
      if (declaration.length !== undefined)
        throw new SimulationInputError(
          `parameter '${declaration.name}' is an array; pass its bytes`,
        );
      const bytes = typeBytes(declaration.type);
      if (!fitsInteger(argument.value, declaration.type, bytes))
        throw new SimulationInputError(
          `parameter '${declaration.name}' is .${declaration.type}; ${argument.value} does not fit in ${bytes * 8} bits`,
        );
      writeBits(params, offset, bytes, scalarBits(argument.value, declaration.type, bytes));
    }
  }

  const [gx, gy, gz] = options.grid;
  const total = gx * gy * gz;
  const sampled = options.sampleBlocks !== undefined && options.sampleBlocks < total;
  const timed =
    options.timing === undefined
      ? undefined
      : timingSetup(options.timing, entryName, program, total, threads);
  const l2 = options.l2 ?? new L2Cache(l2Bytes);
  l2.bind(
    global.buffers.map(({ name, base, bytes }) => `${name}@${base}+${bytes.byteLength}`).join(),
  );
  const state: SimulationState = {
    global,
    params,
    findings: new FindingLog(module.files),
    counters: emptyCounters(bufferNames),
    l2,
    grid: options.grid,
    block: options.block,
    sanitize: options.sanitize !== false,
    trace: timed?.recorder,
    clock: 0,
    steps: 0,
  };
  const count = sampled ? (options.sampleBlocks ?? total) : total;
  const perBlock: number[] = [];
  let firstBlockDramBytesRead: Record<string, number> = {};
  const resources = allocateCtaResources(program, state);
  for (let index = 0; index < count; index++) {
    // A sample ends with the grid's last block, where a partial tile would show.
    const linear = sampled && index === count - 1 ? total - 1 : index;
    const before = sampled ? totalWarpInstructions(state.counters) : 0;
    // The busiest SM runs blocks 0, SMs, 2·SMs, …; a sample's blocks all stand for its blocks.
    timed?.recorder.startBlock(
      linear,
      resources.warps.length,
      sampled || linear % timed.gpu.sms === 0,
    );
    runCta(
      program,
      state,
      [linear % gx, Math.floor(linear / gx) % gy, Math.floor(linear / (gx * gy))],
      limit,
      resources,
    );
    if (!sampled) continue;
    perBlock.push(totalWarpInstructions(state.counters) - before);
    if (index === 0)
      firstBlockDramBytesRead = Object.fromEntries(
        Object.entries(state.counters.buffers).map(([name, traffic]) => [
          name,
          traffic.dramBytesRead,
        ]),
      );
  }
  state.l2.flush();
  const result: SimulationResult = {
    ...(sampled
      ? { sample: { blocks: count, warpInstructions: perBlock, firstBlockDramBytesRead } }
      : {}),
    findings: state.findings.list(),
    counters: state.counters,
    milliseconds: performance.now() - started,
    grid: options.grid,
    block: options.block,
  };
  if (timed === undefined) return result;
  const estimate = estimateLaunch({
    gpu: timed.gpu,
    registers: timed.registers,
    occupancy: timed.occupancy,
    blocks: total,
    traces: timed.recorder.blocks,
    sampled,
    registerSlots: program.registerCount,
    timings: instructionTimings(program),
    counters: scaleSample(result),
  });
  return { ...result, estimate, milliseconds: performance.now() - started };
}

/** Occupancy of a timed launch and the recorder of its traced blocks, whose L1 is what shared memory leaves. */
function timingSetup(
  timing: TimingOptions,
  entryName: string,
  program: Program,
  blocks: number,
  threads: number,
): { gpu: GpuSpec; registers: number; occupancy: Occupancy; recorder: TraceRecorder } {
  const { gpu } = timing;
  const registers =
    typeof timing.registers === 'number'
      ? timing.registers
      : Object.hasOwn(timing.registers, entryName)
        ? timing.registers[entryName]
        : undefined;
  if (registers === undefined)
    throw new SimulationInputError(`timing: no register count for entry '${entryName}'`);
  const sharedBytes = program.sharedBytes;
  const placed = occupancy({ blocks, threadsPerBlock: threads, registers, sharedBytes }, gpu);
  const reserved = sharedBytes > 0 ? gpu.sharedReservedPerBlock : 0;
  const l1Bytes = Math.max(
    0,
    gpu.l1SharedBytesPerSm - placed.blocksPerSm * (sharedBytes + reserved),
  );
  return {
    gpu,
    registers,
    occupancy: placed,
    recorder: new TraceRecorder(Math.floor(l1Bytes / 32)),
  };
}
