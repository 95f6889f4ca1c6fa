import { ISSUE_CLASSES, type IssueClass } from './issue-class.js';

/** Per-buffer traffic and global-memory sector efficiency. */
export interface BufferTraffic {
  bytesRead: number;
  bytesWritten: number;
  /** Distinct bytes each warp-level global load/store of this buffer asked for, summed. */
  requestedBytes: number;
  /** 32-byte sectors those warp-level accesses touched, times 32. */
  sectorBytes: number;
  /** Bytes the modeled L2 read from DRAM for this buffer (load misses, 32 per sector). */
  dramBytesRead: number;
  /** Bytes the modeled L2 wrote back to DRAM (dirty sectors evicted or flushed, 32 each). */
  dramBytesWritten: number;
}

/**
 * What one simulate run counted: warp- and thread-level instructions, and the traffic of every
 * global buffer, including what the modeled L2 exchanged with DRAM.
 */
export interface Counters {
  /** Warp-level instructions issued, by family (`ld`, `add`, `shfl`, …). */
  readonly warpInstructions: Record<string, number>;
  /** The same warp instructions by the execution unit they occupy (the timing model's pipes). */
  readonly warpInstructionsByClass: Record<IssueClass, number>;
  /** Thread-level instructions executed (guard true). */
  threadInstructions: number;
  readonly buffers: Record<string, BufferTraffic>;
}

export function emptyCounters(bufferNames: readonly string[]): Counters {
  return {
    warpInstructions: {},
    warpInstructionsByClass: Object.fromEntries(ISSUE_CLASSES.map((name) => [name, 0])) as Record<
      IssueClass,
      number
    >,
    threadInstructions: 0,
    buffers: Object.fromEntries(
      bufferNames.map((name) => [
        name,
        {
          bytesRead: 0,
          bytesWritten: 0,
          requestedBytes: 0,
          sectorBytes: 0,
          dramBytesRead: 0,
          dramBytesWritten: 0,
        },
      ]),
    ),
  };
}

/** Warp-level instructions issued, all families summed. */
export function totalWarpInstructions(counters: Counters): number {
  return Object.values(counters.warpInstructions).reduce((sum, count) => sum + count, 0);
}

/** Requested bytes over sector bytes across every global access (1 = perfectly coalesced). */
export function sectorEfficiency(counters: Counters, buffers?: readonly string[]): number {
  let requested = 0;
  let sectors = 0;
  for (const [name, traffic] of Object.entries(counters.buffers)) {
    if (buffers !== undefined && !buffers.includes(name)) continue;
    requested += traffic.requestedBytes;
    sectors += traffic.sectorBytes;
  }
  return sectors === 0 ? 1 : requested / sectors;
}

/** Bytes the modeled L2 read from DRAM, over all buffers or the named ones. */
export function dramBytesRead(counters: Counters, buffers?: readonly string[]): number {
  let total = 0;
  for (const [name, traffic] of Object.entries(counters.buffers)) {
    if (buffers === undefined || buffers.includes(name)) total += traffic.dramBytesRead;
  }
  return total;
}
