import { ISSUE_CLASSES } from '../executor/issue-class.js';
import {
  ASYNC_COPY,
  ATOMIC,
  FIELDS,
  GLOBAL_LOAD,
  GLOBAL_STORE,
  LOCAL,
  SHARED,
} from '../executor/trace.js';
import type { GpuSpec } from './gpu.js';
import type { InstructionTiming } from './instruction-timing.js';

const SECTOR = 32;

/** A warp's trace words as the model replays them. */
export interface WarpStream {
  readonly words: Int32Array;
  readonly length: number;
}

/** One SM's share of a launch, as the model replays it. */
export interface SmWork {
  /** The blocks this SM runs, in launch order (a sample's traces repeat to fill it). */
  readonly blocks: readonly { readonly warps: readonly WarpStream[] }[];
  /** Blocks resident at once (occupancy). */
  readonly residentBlocks: number;
  readonly warpsPerBlock: number;
  readonly registerSlots: number;
  readonly timings: readonly InstructionTiming[];
  readonly gpu: GpuSpec;
  /** This SM's share of DRAM and L2 bandwidth, bytes per clock. */
  readonly dramBytesPerClock: number;
  readonly l2BytesPerClock: number;
}

/** What the replay measured, in clocks and bytes of this SM. */
export interface SmTiming {
  readonly cycles: number;
  /** Lower bounds: the busiest scheduler's issue slots and pipes, the L1/shared data path, DRAM and L2 shares. */
  readonly issueCycles: number;
  readonly dataPathCycles: number;
  readonly dramCycles: number;
  readonly l2Cycles: number;
  readonly sharedWavefronts: number;
  readonly sharedWavefrontsMinimum: number;
  readonly meanDramBytesInFlight: number;
  readonly peakDramBytesInFlight: number;
  /** Mean over warps of the DRAM loads each waited for after its previous wait had ended. */
  readonly dramRoundTripsPerWarp: number;
  readonly warpInstructions: number;
}

interface Block {
  /** The residency slot it holds, which the next block takes when it ends. */
  readonly slot: number;
  readonly warps: Warp[];
  live: number;
  arrived: number;
}

interface Warp {
  readonly words: Int32Array;
  readonly length: number;
  readonly block: Block;
  readonly scheduler: number;
  cursor: number;
  done: boolean;
  atBarrier: boolean;
  notBefore: number;
  lastIssue: number;
  roundTrips: number;
  roundTripEnd: number;
  readonly ready: Float64Array;
  /** The warp's issue order (`sequence`) of each register's last read and last write, -1 if none. */
  readonly lastRead: Float64Array;
  readonly lastWrite: Float64Array;
  sequence: number;
  /** Issue clock of the DRAM load that produced each register, NaN when none did. */
  readonly dramIssue: Float64Array;
  /** cp.async copies since the last commit: when the last lands, and the first DRAM one's issue. */
  openGroupLands: number;
  openGroupIssue: number;
  /** Committed cp.async groups, oldest first: (lands, first DRAM issue) pairs. */
  readonly groups: number[];
}

interface Scheduler {
  readonly warps: Warp[];
  free: number;
  last: Warp | undefined;
  readonly pipeFree: Float64Array;
  readonly pipeBusy: Float64Array;
  issued: number;
}

/**
 * Replays one SM's blocks clock by clock: each scheduler issues at most one instruction a clock,
 * from the warp that issued last if it can go on (greedy-then-oldest), else the oldest ready one.
 * An instruction is ready when its operands are (the scoreboard), its unit's pipe is free and its
 * warp is not held at a barrier. Memory instructions pass the L1/shared data path (one 128-byte
 * wavefront a clock), then L2 and DRAM, each a queue at this SM's share of the bandwidth, and
 * their results arrive after the latency of the level they reached.
 */
export function replaySm(work: SmWork): SmTiming {
  const { gpu, timings, warpsPerBlock } = work;
  const lat = gpu.latencies;
  const classLatency = ISSUE_CLASSES.map((name) => lat.classes[name]);
  // Clocks one warp instruction holds its class's pipe in one sub-partition.
  const occupancy = ISSUE_CLASSES.map((name) =>
    name === 'control' ? 1 : gpu.schedulersPerSm / gpu.classRates[name],
  );
  const schedulers: Scheduler[] = Array.from({ length: gpu.schedulersPerSm }, () => ({
    warps: [],
    free: 0,
    last: undefined,
    pipeFree: new Float64Array(ISSUE_CLASSES.length),
    pipeBusy: new Float64Array(ISSUE_CLASSES.length),
    issued: 0,
  }));
  let dataPathFree = 0;
  let l2Free = 0;
  let dramFree = 0;
  let dataPathBusy = 0;
  let l2Bytes = 0;
  let dramBytes = 0;
  let sharedWavefronts = 0;
  let sharedWavefrontsMinimum = 0;
  let end = 0;
  let warpInstructions = 0;
  const inFlight: number[] = [];
  const finished: Warp[] = [];

  let nextBlock = 0;
  let liveBlocks = 0;
  const startBlock = (slot: number, at: number): void => {
    const trace = work.blocks[nextBlock++];
    if (trace === undefined) return;
    const block: Block = { slot, warps: [], live: trace.warps.length, arrived: 0 };
    trace.warps.forEach((stream, index) => {
      const scheduler = schedulers[(slot * warpsPerBlock + index) % schedulers.length] as Scheduler;
      const warp: Warp = {
        words: stream.words,
        length: stream.length,
        block,
        scheduler: schedulers.indexOf(scheduler),
        cursor: 0,
        done: stream.length === 0,
        atBarrier: false,
        notBefore: at,
        lastIssue: at - 1,
        roundTrips: 0,
        roundTripEnd: -Infinity,
        ready: new Float64Array(work.registerSlots),
        lastRead: new Float64Array(work.registerSlots).fill(-1),
        lastWrite: new Float64Array(work.registerSlots).fill(-1),
        sequence: 0,
        dramIssue: new Float64Array(work.registerSlots).fill(Number.NaN),
        openGroupLands: at,
        openGroupIssue: Number.NaN,
        groups: [],
      };
      block.warps.push(warp);
      passAliases(warp);
      if (warp.done) block.live--;
      else scheduler.warps.push(warp);
    });
    liveBlocks++;
    if (block.live === 0) finishBlock(block, at);
  };
  const finishBlock = (block: Block, at: number): void => {
    liveBlocks--;
    for (const warp of block.warps) finished.push(warp);
    for (const scheduler of schedulers) {
      const kept = scheduler.warps.filter((warp) => warp.block !== block);
      scheduler.warps.length = 0;
      scheduler.warps.push(...kept);
      if (scheduler.last?.block === block) scheduler.last = undefined;
    }
    startBlock(block.slot, at + 1);
  };
  const release = (block: Block, at: number): void => {
    if (block.arrived === 0 || block.arrived < block.live) return;
    block.arrived = 0;
    for (const warp of block.warps)
      if (warp.atBarrier) {
        warp.atBarrier = false;
        warp.notBefore = at + lat.barrier;
      }
  };

  // Marks the registers an instruction reads and writes, in the warp's order of issue.
  const touch = (warp: Warp, { reads, writes }: InstructionTiming): void => {
    const sequence = warp.sequence++;
    for (let index = 0; index < reads.length; index++)
      warp.lastRead[reads[index] as number] = sequence;
    for (let index = 0; index < writes.length; index++)
      warp.lastWrite[writes[index] as number] = sequence;
  };
  // A copy coalesces unless its destination's old value was read after its source was written.
  const coalesces = (warp: Warp, { reads, writes }: InstructionTiming): boolean =>
    (warp.lastRead[writes[0] as number] as number) <=
    (warp.lastWrite[reads[0] as number] as number);

  // A warp's aliases at its cursor take no issue slot: their results are ready when the source is.
  const passAliases = (warp: Warp): void => {
    while (!warp.done) {
      const timing = timings[(warp.words[warp.cursor] as number) >> 3] as InstructionTiming;
      if (!timing.alias && !(timing.copy && coalesces(warp, timing))) return;
      touch(warp, timing);
      let [ready, dramIssue] = [warp.notBefore, Number.NaN];
      for (const slot of timing.reads)
        if ((warp.ready[slot] as number) > ready)
          [ready, dramIssue] = [warp.ready[slot] as number, warp.dramIssue[slot] as number];
      for (const slot of timing.writes) {
        warp.ready[slot] = ready;
        warp.dramIssue[slot] = dramIssue;
      }
      warp.cursor += 1;
      warp.done = warp.cursor >= warp.length;
    }
  };

  // cp.async.wait_group N: the warp's next instruction waits until all but its newest N groups
  // have landed; a wait for DRAM copies issued after its last such wait ended is a round trip.
  const waitForGroups = (warp: Warp, pending: number, t: number): void => {
    const { groups } = warp;
    const landed = groups.length / 2 - pending;
    if (landed <= 0) return;
    let [lands, issue] = [t, -Infinity];
    for (let index = 0; index < landed; index++) {
      lands = Math.max(lands, groups[2 * index] as number);
      const groupIssue = groups[2 * index + 1] as number;
      if (groupIssue > issue) issue = groupIssue;
    }
    groups.splice(0, 2 * landed);
    if (lands > t + 1 && issue > -Infinity && issue >= warp.roundTripEnd) {
      warp.roundTrips++;
      warp.roundTripEnd = lands;
    }
    warp.notBefore = Math.max(warp.notBefore, lands);
  };

  const earliest = (warp: Warp, scheduler: Scheduler): number => {
    if (warp.done || warp.atBarrier) return Infinity;
    const timing = timings[(warp.words[warp.cursor] as number) >> 3] as InstructionTiming;
    let at = Math.max(warp.notBefore, scheduler.pipeFree[timing.classIndex] as number);
    const { reads } = timing;
    for (let index = 0; index < reads.length; index++)
      at = Math.max(at, warp.ready[reads[index] as number] as number);
    return at;
  };

  const issue = (warp: Warp, scheduler: Scheduler, t: number): void => {
    const header = warp.words[warp.cursor] as number;
    const tag = header & 7;
    const timing = timings[header >> 3] as InstructionTiming;
    const field = (index: number): number => warp.words[warp.cursor + 1 + index] as number;
    const { classIndex, reads, writes } = timing;
    touch(warp, timing);
    warpInstructions++;
    scheduler.issued++;
    scheduler.free = t + 1;
    scheduler.pipeFree[classIndex] = t + (occupancy[classIndex] as number);
    scheduler.pipeBusy[classIndex] =
      (scheduler.pipeBusy[classIndex] as number) + (occupancy[classIndex] as number);
    // A wait for a DRAM load issued after the warp's previous such wait ended is a new round trip.
    let binding = -1;
    for (let index = 0; index < reads.length; index++) {
      const slot = reads[index] as number;
      if (binding < 0 || (warp.ready[slot] as number) > (warp.ready[binding] as number))
        binding = slot;
    }
    if (binding >= 0) {
      const waited = warp.ready[binding] as number;
      const loadIssue = warp.dramIssue[binding] as number;
      if (waited > warp.lastIssue + 1 && loadIssue >= warp.roundTripEnd) {
        warp.roundTrips++;
        warp.roundTripEnd = waited;
      }
    }
    let ready = t + (timing.param ? lat.classes.int : (classLatency[classIndex] as number));
    let dramLoad = false;
    const dataPath = (wavefronts: number): number => {
      const start = Math.max(t, dataPathFree);
      dataPathFree = start + wavefronts;
      dataPathBusy += wavefronts;
      return start;
    };
    const toL2 = (bytes: number, start: number): number => {
      l2Bytes += bytes;
      l2Free = Math.max(l2Free, start) + bytes / work.l2BytesPerClock;
      return l2Free;
    };
    const toDram = (bytes: number, start: number): number => {
      dramBytes += bytes;
      dramFree = Math.max(dramFree, start) + bytes / work.dramBytesPerClock;
      return dramFree;
    };
    // A global read's sectors through L1, L2 and DRAM: when its last sector arrives.
    const globalRead = (l1: number, l2: number, dram: number): number => {
      const bytes = (l1 + l2 + dram) * SECTOR;
      const start = dataPath(Math.max(1, Math.ceil(bytes / gpu.l1BytesPerClock)));
      let arrival = start + lat.l1;
      if (l2 + dram > 0) arrival = Math.max(arrival, toL2((l2 + dram) * SECTOR, start) + lat.l2);
      if (dram > 0) {
        const arrives = toDram(dram * SECTOR, start) + lat.dram;
        arrival = Math.max(arrival, arrives);
        inFlight.push(t, arrives, dram * SECTOR);
        dramLoad = true;
      }
      return arrival;
    };
    switch (tag) {
      case GLOBAL_LOAD:
        ready = globalRead(field(0), field(1), field(2));
        break;
      case ASYNC_COPY: {
        // No register waits for it: it joins the open group, which a wait_group waits for.
        ready = globalRead(field(0), field(1), field(2));
        warp.openGroupLands = Math.max(warp.openGroupLands, ready);
        if (dramLoad && Number.isNaN(warp.openGroupIssue)) warp.openGroupIssue = t;
        dramLoad = false;
        break;
      }
      case GLOBAL_STORE: {
        const bytes = field(0) * SECTOR;
        const start = dataPath(Math.max(1, Math.ceil(bytes / gpu.l1BytesPerClock)));
        end = Math.max(end, toL2(bytes, start) + lat.l2, toDram(bytes, start));
        break;
      }
      case ATOMIC: {
        const [l2, dram] = [field(0), field(1)];
        const start = dataPath(1);
        ready = toL2((l2 + dram) * SECTOR, start) + lat.l2;
        if (dram > 0) ready = Math.max(ready, toDram(dram * SECTOR, start) + lat.dram);
        break;
      }
      case SHARED: {
        const wavefronts = field(0);
        sharedWavefronts += wavefronts;
        sharedWavefrontsMinimum += field(1);
        ready = dataPath(wavefronts / gpu.sharedWavefrontsPerClock) + wavefronts + lat.shared - 1;
        break;
      }
      case LOCAL:
        ready = dataPath(1) + lat.l1;
        break;
      default:
        break;
    }
    for (let index = 0; index < writes.length; index++) {
      const slot = writes[index] as number;
      warp.ready[slot] = ready;
      warp.dramIssue[slot] = dramLoad ? t : Number.NaN;
    }
    end = Math.max(end, ready, t + 1);
    if (timing.asyncCommit) {
      warp.groups.push(warp.openGroupLands, warp.openGroupIssue);
      [warp.openGroupLands, warp.openGroupIssue] = [t, Number.NaN];
    }
    if (timing.asyncWait >= 0) waitForGroups(warp, timing.asyncWait, t);
    warp.cursor += 1 + (FIELDS[tag] ?? 0);
    warp.lastIssue = t;
    scheduler.last = warp;
    const block = warp.block;
    passAliases(warp);
    if (warp.cursor >= warp.length) {
      warp.done = true;
      block.live--;
      if (block.live === 0) finishBlock(block, t);
      else release(block, t);
    } else if (timing.barrier) {
      warp.atBarrier = true;
      block.arrived++;
      release(block, t);
    }
  };

  for (let slot = 0; slot < work.residentBlocks && nextBlock < work.blocks.length; slot++)
    startBlock(slot, 0);
  let t = 0;
  while (liveBlocks > 0) {
    let next = Infinity;
    for (const scheduler of schedulers) {
      if (scheduler.free > t) {
        next = Math.min(next, scheduler.free);
        continue;
      }
      let chosen: Warp | undefined;
      const last = scheduler.last;
      if (last !== undefined) {
        const at = earliest(last, scheduler);
        if (at <= t) chosen = last;
        else next = Math.min(next, at);
      }
      for (let index = 0; chosen === undefined && index < scheduler.warps.length; index++) {
        const warp = scheduler.warps[index] as Warp;
        if (warp === last) continue;
        const at = earliest(warp, scheduler);
        if (at <= t) chosen = warp;
        else next = Math.min(next, at);
      }
      if (chosen !== undefined) {
        issue(chosen, scheduler, t);
        next = Math.min(next, t + 1);
      }
    }
    if (liveBlocks === 0) break;
    if (next === Infinity)
      throw new Error('timing model: no warp can ever issue (a barrier no warp reaches)');
    t = Math.max(t + 1, Math.ceil(next));
  }

  const cycles = Math.max(end, t);
  let issueCycles = 0;
  for (const scheduler of schedulers) {
    let busiest = scheduler.issued;
    for (const busy of scheduler.pipeBusy) busiest = Math.max(busiest, busy);
    issueCycles = Math.max(issueCycles, busiest);
  }
  const { mean, peak } = bytesInFlight(inFlight, cycles);
  const roundTrips = finished.reduce((sum, warp) => sum + warp.roundTrips, 0);
  return {
    cycles,
    issueCycles,
    dataPathCycles: dataPathBusy,
    dramCycles: dramBytes / work.dramBytesPerClock,
    l2Cycles: l2Bytes / work.l2BytesPerClock,
    sharedWavefronts,
    sharedWavefrontsMinimum,
    meanDramBytesInFlight: mean,
    peakDramBytesInFlight: peak,
    dramRoundTripsPerWarp: finished.length === 0 ? 0 : roundTrips / finished.length,
    warpInstructions,
  };
}

/** Mean and peak of the bytes DRAM loads had outstanding, from (issue, arrival, bytes) triples. */
function bytesInFlight(triples: readonly number[], cycles: number): { mean: number; peak: number } {
  const events: [number, number][] = [];
  let area = 0;
  for (let index = 0; index < triples.length; index += 3) {
    const [start, stop, bytes] = [triples[index], triples[index + 1], triples[index + 2]] as [
      number,
      number,
      number,
    ];
    area += (stop - start) * bytes;
    events.push([start, bytes], [stop, -bytes]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let peak = 0;
  for (const [, change] of events) {
    current += change;
    peak = Math.max(peak, current);
  }
  return { mean: cycles === 0 ? 0 : area / cycles, peak };
}
