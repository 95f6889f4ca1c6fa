import { SimulationInputError } from '../errors.js';
import { sharedWavefronts } from '../timing/shared-banks.js';

/**
 * Event tags in a warp's trace. An event is one word, `pc × 8 + tag`, then the tag's fields:
 * GLOBAL_LOAD l1, l2 and DRAM sectors; GLOBAL_STORE sectors; ATOMIC l2 and DRAM sectors; SHARED
 * wavefronts and their minimum; LOCAL none (an L1 access); ASYNC_COPY (cp.async: global to shared)
 * l1, l2 and DRAM sectors, like a load's.
 */
export const PLAIN = 0;
export const GLOBAL_LOAD = 1;
export const GLOBAL_STORE = 2;
export const ATOMIC = 3;
export const SHARED = 4;
export const LOCAL = 5;
export const ASYNC_COPY = 6;
export const FIELDS: readonly number[] = [0, 3, 1, 2, 2, 0, 3];

/** Words all traces of one run may hold (128 MiB): past it the run is too long to time. */
export const MAX_TRACE_WORDS = 2 ** 25;

/** An Int32 array that grows as words are pushed. */
export class WordStream {
  words = new Int32Array(64);
  length = 0;

  push(word: number): void {
    if (this.length === this.words.length) {
      const grown = new Int32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    this.words[this.length++] = word;
  }
}

/** One block's warps' event streams, in the order the warps issued them. */
export interface BlockTrace {
  readonly linear: number;
  readonly warps: readonly WordStream[];
}

/**
 * Records, for the blocks it is told to trace, every warp instruction issued with where its memory
 * accesses landed: global sectors in the SM's L1 (modeled here: LRU over 32-byte sectors, kept
 * across the traced blocks, which run on one SM), in L2 or in DRAM (the run's L2 model), and the
 * shared-memory wavefronts of the lanes' addresses.
 */
export class TraceRecorder {
  readonly blocks: BlockTrace[] = [];
  private block: BlockTrace | undefined;
  private stream: WordStream | undefined;
  private header = -1;
  private readonly fields = new Int32Array(3);
  private readonly l1 = new Map<number, true>();
  private words = 0;
  private readonly sharedStarts = new Float64Array(32);
  private readonly sharedEnds = new Float64Array(32);
  private readonly sharedLanes: number[] = [];

  constructor(
    /** Sectors the L1 holds (L1 and shared capacity less the resident blocks' shared memory). */
    private readonly l1Sectors: number,
  ) {}

  /** Starts a block: traced when `traced`, else its instructions and accesses are ignored. */
  startBlock(linear: number, warps: number, traced: boolean): void {
    this.block = traced
      ? { linear, warps: Array.from({ length: warps }, () => new WordStream()) }
      : undefined;
    if (this.block !== undefined) this.blocks.push(this.block);
  }

  /** A warp issues the instruction at `pc`. */
  begin(warp: number, pc: number): void {
    if (this.block === undefined) return;
    this.stream = this.block.warps[warp];
    if (this.stream === undefined) return;
    this.header = this.stream.length;
    this.stream.push(pc * 8 + PLAIN);
    this.fields.fill(0);
    this.sharedLanes.length = 0;
  }

  /** The instruction's accesses are done: its tag and fields follow its header. */
  end(): void {
    const stream = this.stream;
    if (stream === undefined) return;
    const tag = (stream.words[this.header] as number) & 7;
    if (this.sharedLanes.length > 0 && tag === PLAIN) {
      const { wavefronts, minimum } = sharedWavefronts(
        this.sharedLanes,
        this.sharedStarts,
        this.sharedEnds,
      );
      stream.words[this.header] = (stream.words[this.header] as number) - tag + SHARED;
      this.fields[0] = wavefronts;
      this.fields[1] = minimum;
    }
    const count = FIELDS[(stream.words[this.header] as number) & 7] as number;
    for (let field = 0; field < count; field++) stream.push(this.fields[field] as number);
    this.words += 1 + count;
    if (this.words > MAX_TRACE_WORDS)
      throw new SimulationInputError(
        `the timed blocks issued more than ${MAX_TRACE_WORDS} trace words: too long a run to time; time a smaller shape or sample fewer blocks`,
      );
    this.stream = undefined;
  }

  private tag(tag: number): boolean {
    const stream = this.stream;
    if (stream === undefined) return false;
    const current = (stream.words[this.header] as number) & 7;
    if (current !== PLAIN && current !== tag) return false;
    stream.words[this.header] = (stream.words[this.header] as number) - current + tag;
    return true;
  }

  /** A warp-level global load or store touched `sector`; `l2Hit` is the L2 model's answer. */
  globalSector(sector: number, l2Hit: boolean, store: boolean): void {
    if (!this.tag(store ? GLOBAL_STORE : GLOBAL_LOAD)) return;
    if (store) {
      this.fields[0] = (this.fields[0] as number) + 1;
      return;
    }
    this.loadSector(sector, l2Hit);
  }

  /** A cp.async read `sector`: through L1 (`.ca`), or from L2 on (`.cg` caches in L2 only). */
  copySector(sector: number, l2Hit: boolean, viaL1: boolean): void {
    if (!this.tag(ASYNC_COPY)) return;
    if (viaL1) this.loadSector(sector, l2Hit);
    else if (l2Hit) this.fields[1] = (this.fields[1] as number) + 1;
    else this.fields[2] = (this.fields[2] as number) + 1;
  }

  /** A load's sector: an L1 hit (LRU over sectors), else an L2 hit or a DRAM read, then in L1. */
  private loadSector(sector: number, l2Hit: boolean): void {
    const fields = this.fields;
    if (this.l1.has(sector)) {
      this.l1.delete(sector);
      fields[0] = (fields[0] as number) + 1;
    } else if (l2Hit) fields[1] = (fields[1] as number) + 1;
    else fields[2] = (fields[2] as number) + 1;
    this.l1.set(sector, true);
    if (this.l1.size > this.l1Sectors) {
      const oldest = this.l1.keys().next();
      if (oldest.done !== true) this.l1.delete(oldest.value);
    }
  }

  /** An atomic touched `sector` in L2. */
  atomicSector(l2Hit: boolean): void {
    if (!this.tag(ATOMIC)) return;
    const index = l2Hit ? 0 : 1;
    this.fields[index] = (this.fields[index] as number) + 1;
  }

  /** A lane accessed `size` bytes of shared memory at `offset`. */
  sharedAccess(lane: number, offset: number, size: number): void {
    if (this.stream === undefined) return;
    if (!this.sharedLanes.includes(lane)) {
      this.sharedLanes.push(lane);
      this.sharedStarts[lane] = offset;
      this.sharedEnds[lane] = offset + size;
      return;
    }
    this.sharedStarts[lane] = Math.min(this.sharedStarts[lane] as number, offset);
    this.sharedEnds[lane] = Math.max(this.sharedEnds[lane] as number, offset + size);
  }

  /** A lane accessed local memory (through L1). */
  localAccess(): void {
    this.tag(LOCAL);
  }
}
