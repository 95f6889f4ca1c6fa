import type { SourceLocation } from '../ast.js';
import type { Bits } from '../semantics/types.js';
import type { Counters } from './counters.js';
import type { FindingCategory, FindingLog } from './findings.js';
import type { L2Cache } from './l2-cache.js';
import type { GlobalMemory, SharedMemory } from './memory.js';
import type { TraceRecorder } from './trace.js';

export const WARP = 32;
export const RUNNING = 0;
export const AT_BARRIER = 1;
export const EXITED = 2;

/** Shadow states of a register value. */
export const NEVER_WRITTEN = 0;
export const DEFINED = 1;
export const UNDEFINED = 2;

/** Why a register's value is undefined, for a finding's message. */
export const undefinedBecause = (name: string, state: number): string =>
  state === NEVER_WRITTEN
    ? `${name}, which was never written`
    : `${name}, whose value comes from a never-written register`;

/** Everything one simulation shares across CTAs. */
export interface SimulationState {
  readonly global: GlobalMemory;
  readonly params: DataView;
  readonly findings: FindingLog;
  readonly counters: Counters;
  /** The L2 behind every global buffer access, for the DRAM counters. */
  readonly l2: L2Cache;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sanitize: boolean;
  /** Records the timed blocks' instruction streams, when the run is timed. */
  readonly trace: TraceRecorder | undefined;
  /** Clock for %clock: thread instructions so far. */
  clock: number;
  /**
   * What the run spent of `maxThreadInstructions`: thread instructions, plus one for a warp
   * instruction that no lane executed (all guarded off), one for each warp leaving the body, and
   * each block's reset of its registers and shared memory (SimulateOptions.maxThreadInstructions).
   */
  steps: number;
}

/** One CTA: its shared memory and warps. */
export interface CtaState {
  readonly id: readonly [number, number, number];
  readonly shared: SharedMemory;
  readonly warps: WarpState[];
  readonly threads: number;
}

/** One warp: per-lane program counters and states, and a register file of `registers` x 32 lanes. */
export interface WarpState {
  readonly index: number;
  /** Lanes that exist (a CTA's last warp may be partial). */
  readonly size: number;
  readonly pc: Int32Array;
  readonly status: Uint8Array;
  /** Values of the registers of up to 32 bits (pred included), at slot index x 32 + lane. */
  readonly values: Float64Array;
  /** Values of the 64-bit registers (bigints), at the same slots; other slots are unused. */
  readonly wide: Bits[];
  /**
   * Definedness of each register value (memcheck-style shadow): NEVER_WRITTEN, DEFINED, or
   * UNDEFINED (computed from a never-written value). Only uses of undefined values are findings.
   */
  readonly shadow: Uint8Array;
  /** Per-lane local memory. */
  readonly local: DataView[];
  /** Whether a lane stored to local memory since it was last zeroed. */
  localWritten: boolean;
}

export interface ExecutionContext {
  readonly simulation: SimulationState;
  readonly cta: CtaState;
  readonly warp: WarpState;
}

/** Linear thread index within the CTA. */
export const threadIndex = (warp: WarpState, lane: number): number => warp.index * WARP + lane;

export function threadCoordinates(
  context: ExecutionContext,
  lane: number,
): [number, number, number] {
  const linear = threadIndex(context.warp, lane);
  const [x, y] = context.simulation.block;
  return [linear % x, Math.floor(linear / x) % y, Math.floor(linear / (x * y))];
}

export function report(
  context: ExecutionContext,
  category: FindingCategory,
  message: string,
  location: SourceLocation,
  lane: number,
): void {
  context.simulation.findings.add(
    category,
    message,
    location,
    context.cta.id,
    threadCoordinates(context, lane),
  );
}
