import type { BufferTraffic } from './counters.js';

/** 4 MiB: the smallest L2 of the sm_75..sm_90 parts (T4), so DRAM figures err high, not low. */
export const DEFAULT_L2_BYTES = 4 * 2 ** 20;
export const SECTOR_BYTES = 32;

interface Line {
  /** The buffer the sector belongs to, charged when the sector goes to or comes from DRAM. */
  traffic: BufferTraffic;
  dirty: boolean;
}

/**
 * One L2 shared by the whole grid, modeling DRAM traffic like Nsight's `dram__bytes_read` and
 * `dram__bytes_write`: 32-byte sectors, LRU over sectors, write-back. A load miss reads the
 * sector from DRAM; a store never reads DRAM (L2 keeps per-byte masks) but dirties the sector,
 * which costs one 32-byte write when it is evicted or flushed at the end of the run. Capacity 0
 * sends every sector access to DRAM.
 */
export class L2Cache {
  // A Map iterates in insertion order, so re-inserting on every use keeps the LRU sector first.
  private readonly lines = new Map<number, Line>();
  private readonly capacity: number;
  private layout: string | undefined;

  constructor(bytes: number) {
    this.capacity = Math.floor(bytes / SECTOR_BYTES);
  }

  /** A warp-level load touching `sector`: a miss reads it from DRAM. Returns whether it hit. */
  read(sector: number, traffic: BufferTraffic): boolean {
    const line = this.lines.get(sector);
    if (line !== undefined) {
      this.touch(sector, line);
      return true;
    }
    traffic.dramBytesRead += SECTOR_BYTES;
    this.insert(sector, { traffic, dirty: false });
    return false;
  }

  /** A warp-level store touching `sector`: it becomes resident and dirty. Returns whether it hit. */
  write(sector: number, traffic: BufferTraffic): boolean {
    const line = this.lines.get(sector);
    if (line !== undefined) {
      // The latest writer's counters pay the write-back (a line may come from an earlier dispatch).
      line.traffic = traffic;
      line.dirty = true;
      this.touch(sector, line);
      return true;
    }
    this.insert(sector, { traffic, dirty: true });
    return false;
  }

  /**
   * Binds the cache to a run's buffers (`layout`: their names and addresses). A later dispatch of
   * the same launch finds the lines its predecessors left, as the GPU's L2 keeps them between
   * kernels; under another layout the addresses mean other bytes, so the cache starts empty.
   */
  bind(layout: string): void {
    if (this.layout !== layout) this.lines.clear();
    this.layout = layout;
  }

  /** Writes every dirty sector back, as the end of a kernel's traffic. */
  flush(): void {
    for (const line of this.lines.values()) {
      if (line.dirty) line.traffic.dramBytesWritten += SECTOR_BYTES;
      line.dirty = false;
    }
  }

  private touch(sector: number, line: Line): void {
    this.lines.delete(sector);
    this.lines.set(sector, line);
  }

  private insert(sector: number, line: Line): void {
    this.lines.set(sector, line);
    while (this.lines.size > this.capacity) {
      const oldest = this.lines.entries().next();
      if (oldest.done === true) return;
      const [evicted, victim] = oldest.value;
      if (victim.dirty) victim.traffic.dramBytesWritten += SECTOR_BYTES;
      this.lines.delete(evicted);
    }
  }
}
