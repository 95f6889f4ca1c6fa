import { typeBytes } from '../ast.js';
import type { Bits } from '../semantics/types.js';
import type { Program } from './compile.js';
import type { Executable } from './program.js';
import { lanesOf } from './lane-lists.js';
import { SharedMemory } from './memory.js';
import {
  AT_BARRIER,
  DEFINED,
  EXITED,
  RUNNING,
  WARP,
  report,
  undefinedBecause,
  type CtaState,
  type ExecutionContext,
  type SimulationState,
  type WarpState,
} from './state.js';

/** Raised when a kernel runs past the instruction budget (an endless loop, most likely). */
export class StepLimitError extends Error {
  override readonly name = 'StepLimitError';
  constructor(
    /** The budget in thread instructions (`maxThreadInstructions`). */
    readonly limit: number,
    /** The PTX line of the instruction that went over it. */
    readonly line: number,
  ) {
    super(
      `more than ${limit} thread instructions executed (last at line ${line}); an endless loop?`,
    );
  }
}

function createWarp(program: Program, index: number, size: number): WarpState {
  return {
    index,
    size,
    pc: new Int32Array(WARP),
    status: new Uint8Array(WARP),
    values: new Float64Array(program.registerCount * WARP),
    wide: new Array<Bits>(program.registerCount * WARP).fill(0n),
    shadow: new Uint8Array(program.registerCount * WARP),
    local: Array.from({ length: WARP }, () => new DataView(new ArrayBuffer(program.localBytes))),
    localWritten: false,
  };
}

/** Puts a warp back in the state of a fresh one: lanes at pc 0, registers zero and never written. */
function resetWarp(warp: WarpState, wideSlots: readonly number[]): void {
  warp.pc.fill(0);
  warp.status.fill(EXITED);
  warp.status.fill(RUNNING, 0, warp.size);
  warp.values.fill(0);
  for (const slot of wideSlots) warp.wide.fill(0n, slot, slot + WARP);
  warp.shadow.fill(0);
  // Local memory is zeroed only once written, and a large one by a fresh buffer, whose pages the
  // system zeroes as they are touched: 512 KiB a thread costs what the kernel touched of it.
  if (warp.localWritten)
    warp.local.forEach((view, lane) => {
      if (view.byteLength >= FRESH_LOCAL_BYTES)
        warp.local[lane] = new DataView(new ArrayBuffer(view.byteLength));
      else new Uint8Array(view.buffer, view.byteOffset, view.byteLength).fill(0);
    });
  warp.localWritten = false;
}

/** Local memory of at least this many bytes a lane is replaced, not zeroed, after a write. */
const FRESH_LOCAL_BYTES = 64 * 1024;

/** Warps and shared memory of a CTA, allocated once per launch and reset for every CTA. */
export interface CtaResources {
  readonly warps: WarpState[];
  readonly shared: SharedMemory;
  /** First slots of the registers wider than 32 bits, whose values live in `wide`. */
  readonly wideSlots: readonly number[];
  /** Warp instructions issued per instruction since the counters last took them (addCounts). */
  readonly issued: Float64Array;
  /** The instructions issued at all since then, each once. */
  readonly touched: number[];
}

/** Adds the warp instructions issued per instruction to the counters by family and issue class. */
function addCounts(program: Program, simulation: SimulationState, resources: CtaResources): void {
  const { issued, touched } = resources;
  const { warpInstructions, warpInstructionsByClass } = simulation.counters;
  for (const index of touched) {
    const count = issued[index] as number;
    if (count === 0) continue;
    const instruction = program.instructions[index] as Executable;
    warpInstructions[instruction.family] = (warpInstructions[instruction.family] ?? 0) + count;
    warpInstructionsByClass[instruction.issueClass] += count;
    issued[index] = 0;
  }
  touched.length = 0;
}

export function allocateCtaResources(program: Program, simulation: SimulationState): CtaResources {
  const [x, y, z] = simulation.block;
  const threads = x * y * z;
  const warps = Array.from({ length: Math.ceil(threads / WARP) }, (_, index) =>
    createWarp(program, index, Math.min(WARP, threads - index * WARP)),
  );
  const wideSlots = [...program.symbols.registers.values()]
    .filter((register) => register.type !== 'pred' && typeBytes(register.type) > 4)
    .map((register) => register.index * WARP);
  return {
    warps,
    shared: new SharedMemory(program.sharedBytes, warps.length),
    wideSlots,
    issued: new Float64Array(program.instructions.length),
    touched: [],
  };
}

const NO_LANES: readonly number[] = [];

/**
 * Runs one warp until none of its lanes can move: each step takes the lowest pc among running
 * lanes and executes that instruction for every lane there, so divergent paths reconverge at the
 * first instruction they share (structured control flow), and warp-collective instructions see
 * exactly the lanes that arrived together.
 */
function runWarp(
  program: Program,
  context: ExecutionContext,
  limit: number,
  { issued, touched }: CtaResources,
): void {
  const { warp, simulation } = context;
  const { pc, status, size } = warp;
  // Read once: a run is traced (timed) or not from start to end.
  const trace = simulation.trace;
  // The lanes at the step's pc. After an instruction that leaves pcs and states alone they all sit
  // at the next pc, and so does no other lane while that is below `second`: the next step needs
  // no look at each lane (`resume`, -1: look).
  let present: readonly number[] = NO_LANES;
  let second = Number.POSITIVE_INFINITY;
  let resume = -1;
  for (;;) {
    let next = resume;
    resume = -1;
    if (next < 0) {
      next = Number.POSITIVE_INFINITY;
      second = Number.POSITIVE_INFINITY;
      let mask = 0;
      for (let lane = 0; lane < size; lane++) {
        if (status[lane] !== RUNNING) continue;
        const at = pc[lane] as number;
        if (at < next) {
          second = next;
          next = at;
          mask = 1 << lane;
        } else if (at === next) mask |= 1 << lane;
        else if (at < second) second = at;
      }
      if (next === Number.POSITIVE_INFINITY) return;
      present = lanesOf(mask);
    }
    const instruction = program.instructions[next];
    if (instruction === undefined) {
      // Falling off the end of the body returns; it costs a step, so even an empty body does.
      if (++simulation.steps > limit) throw new StepLimitError(limit, program.entry.location.line);
      for (let index = 0; index < present.length; index++)
        status[present[index] as number] = EXITED;
      continue;
    }
    for (let index = 0; index < present.length; index++) pc[present[index] as number] = next + 1;
    const guard = instruction.guard;
    let lanes = present;
    let off = NO_LANES;
    if (guard !== undefined) {
      let on = 0;
      let skipped = 0;
      for (let index = 0; index < present.length; index++) {
        const lane = present[index] as number;
        const state = warp.shadow[guard.slot + lane] as number;
        if (state !== DEFINED && simulation.sanitize) {
          // An undefined guard decides control flow: memcheck's "conditional jump" case.
          report(
            context,
            'uninitialized-register',
            `guard reads ${undefinedBecause(guard.name, state)}`,
            instruction.location,
            lane,
          );
        }
        if ((warp.values[guard.slot + lane] === 1) !== guard.negated) on |= 1 << lane;
        else skipped |= 1 << lane;
      }
      lanes = lanesOf(on);
      off = lanesOf(skipped);
    }
    // A family enters the counters when first issued, so they list families in that order.
    const issuedBefore = issued[next] as number;
    issued[next] = issuedBefore + 1;
    if (issuedBefore === 0) {
      touched.push(next);
      simulation.counters.warpInstructions[instruction.family] ??= 0;
    }
    simulation.counters.threadInstructions += lanes.length;
    simulation.clock += lanes.length;
    // An instruction every lane skips still costs a step: a huge grid of them ends too.
    simulation.steps += lanes.length > 0 ? lanes.length : 1;
    if (simulation.steps > limit) {
      throw new StepLimitError(limit, instruction.location.line);
    }
    trace?.begin(warp.index, next);
    if (lanes.length > 0 || instruction.collective === true)
      instruction.execute(context, lanes, off);
    trace?.end();
    if (!instruction.changesFlow && next + 1 < second) resume = next + 1;
  }
}

/** Runs one CTA to completion, releasing barriers and reporting divergent ones. */
export function runCta(
  program: Program,
  simulation: SimulationState,
  id: readonly [number, number, number],
  limit: number,
  resources: CtaResources = allocateCtaResources(program, simulation),
): void {
  const [x, y, z] = simulation.block;
  const threads = x * y * z;
  const { warps, shared, wideSlots } = resources;
  // Resetting the registers and shared memory is work too, so it counts: one step a register a
  // warp, one per 32 shared bytes. A huge grid of blocks that each do little still ends.
  simulation.steps += program.registerCount * warps.length + Math.ceil(shared.bytes.length / 32);
  if (simulation.steps > limit) throw new StepLimitError(limit, program.entry.location.line);
  for (const warp of warps) resetWarp(warp, wideSlots);
  shared.reset();
  const cta: CtaState = { id, shared, warps, threads };
  const contexts = warps.map((warp): ExecutionContext => ({ simulation, cta, warp }));
  try {
    for (;;) {
      for (const context of contexts) runWarp(program, context, limit, resources);
      if (!releaseBarrier(program, simulation, contexts, threads)) return;
      cta.shared.epoch++;
    }
  } finally {
    addCounts(program, simulation, resources);
  }
}

/**
 * Once every warp stopped: releases the lanes waiting at a barrier, reporting a barrier that not
 * every thread reached; returns false when none waits (the CTA is done).
 */
function releaseBarrier(
  program: Program,
  simulation: SimulationState,
  contexts: readonly ExecutionContext[],
  threads: number,
): boolean {
  let waiting = 0;
  let exited = 0;
  let first: ExecutionContext | undefined;
  let firstLane = 0;
  for (const context of contexts) {
    for (let lane = 0; lane < context.warp.size; lane++) {
      if (context.warp.status[lane] !== AT_BARRIER) exited++;
      else if (waiting++ === 0) {
        first = context;
        firstLane = lane;
      }
    }
  }
  if (first === undefined) return false;
  const barrierPc = (first.warp.pc[firstLane] as number) - 1;
  const location = program.instructions[barrierPc]?.location ?? { line: 0, text: 'bar.sync' };
  if (simulation.sanitize && exited > 0) {
    report(
      first,
      'divergent-barrier',
      `${waiting} of ${threads} threads wait at the barrier while ${exited} have exited`,
      location,
      firstLane,
    );
  }
  if (simulation.sanitize) {
    let other: number | undefined;
    for (const context of contexts) {
      for (let lane = 0; lane < context.warp.size && other === undefined; lane++) {
        const at = (context.warp.pc[lane] as number) - 1;
        if (context.warp.status[lane] === AT_BARRIER && at !== barrierPc) other = at;
      }
      if (other !== undefined) break;
    }
    if (other !== undefined) {
      report(
        first,
        'divergent-barrier',
        `threads of one CTA wait at different barriers (lines ${location.line} and ${program.instructions[other]?.location.line})`,
        location,
        firstLane,
      );
    }
  }
  for (const context of contexts) {
    const { status, size } = context.warp;
    for (let lane = 0; lane < size; lane++) if (status[lane] === AT_BARRIER) status[lane] = RUNNING;
  }
  return true;
}
