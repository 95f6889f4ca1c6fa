import { bitcastValue } from '@forge/ir';
import { WgslExecutionError, type Value, type ValueType } from './values.test-support.js';

// A storage buffer or workgroup array as 32-bit words; workgroup arrays also track who touched each
// word since the last barrier, so a missing barrier shows as a race instead of a lucky ordering.

/** Lanes of one workgroup and where they stand; shared by every compiled statement of a run. */
export interface Machine {
  readonly workgroupSize: number;
  readonly subgroupSize: number;
  /** Whether `fma` rounds once (true) or rounds the product first. */
  readonly fusedFma: boolean;
  workgroupId: readonly number[];
  numWorkgroups: readonly number[];
  /** Barriers passed in this workgroup; accesses between two barriers share an epoch. */
  epoch: number;
  /** subgroupShuffleXor results read from another lane, over the whole run. */
  shuffles: number;
  /** 1 for the lanes running the current statement (kept up to date where a subgroup op needs it). */
  readonly active: Uint8Array;
  /** 1 for a lane whose subgroup is wholly active in the current statement. */
  readonly subgroupActive: Uint8Array;
}

/** The lanes of a statement, marked in `active`, with `subgroupActive` for the subgroup ops. */
export function markActive(machine: Machine, lanes: readonly number[]): void {
  const { active, subgroupActive, subgroupSize, workgroupSize } = machine;
  active.fill(0);
  for (const lane of lanes) active[lane] = 1;
  for (let base = 0; base < workgroupSize; base += subgroupSize) {
    const end = Math.min(base + subgroupSize, workgroupSize);
    let whole = 1;
    for (let lane = base; lane < end; lane++) whole &= active[lane] ?? 0;
    subgroupActive.fill(whole, base, end);
  }
}

interface Tracking {
  readonly machine: Machine;
  readonly writer: Int32Array;
  readonly writeEpoch: Int32Array;
  readonly reader: Int32Array;
  readonly readEpoch: Int32Array;
}

export class Memory {
  readonly words: Uint32Array;
  private readonly tracking: Tracking | undefined;

  constructor(
    readonly name: string,
    readonly element: ValueType,
    bytes: ArrayBuffer,
    machine?: Machine,
  ) {
    this.words = new Uint32Array(bytes);
    const length = this.words.length;
    this.tracking =
      machine === undefined
        ? undefined
        : {
            machine,
            writer: new Int32Array(length),
            writeEpoch: new Int32Array(length),
            reader: new Int32Array(length),
            readEpoch: new Int32Array(length),
          };
  }

  /** Elements in the array. */
  get length(): number {
    return Math.floor(this.words.length / this.element.width);
  }

  /** Zeroes a workgroup array and forgets its accesses, for the next workgroup. */
  reset(): void {
    this.words.fill(0);
    this.tracking?.writeEpoch.fill(0);
    this.tracking?.readEpoch.fill(0);
  }

  private word(index: number, lane: number): number {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new WgslExecutionError(
        `${this.name}[${index}] is out of bounds (${this.length} elements), read or written by invocation ${lane}`,
      );
    }
    return index * this.element.width;
  }

  private read(word: number, lane: number): number {
    const tracking = this.tracking;
    if (tracking !== undefined) {
      const epoch = tracking.machine.epoch;
      const writer = tracking.writer[word] ?? 0;
      if (tracking.writeEpoch[word] === epoch && writer !== lane + 1)
        this.race(word, `invocation ${lane} reads what invocation ${writer - 1} wrote`);
      if (tracking.readEpoch[word] !== epoch) {
        tracking.readEpoch[word] = epoch;
        tracking.reader[word] = lane + 1;
      } else if (tracking.reader[word] !== lane + 1) {
        tracking.reader[word] = -1;
      }
    }
    return this.words[word] ?? 0;
  }

  private write(word: number, bits: number, lane: number): void {
    const tracking = this.tracking;
    if (tracking !== undefined) {
      const epoch = tracking.machine.epoch;
      const writer = tracking.writer[word] ?? 0;
      if (tracking.writeEpoch[word] === epoch && writer !== lane + 1)
        this.race(word, `invocations ${writer - 1} and ${lane} both write it`);
      const reader = tracking.reader[word] ?? 0;
      if (tracking.readEpoch[word] === epoch && reader !== lane + 1)
        this.race(
          word,
          `invocation ${lane} overwrites what ${reader === -1 ? 'other invocations' : `invocation ${reader - 1}`} read`,
        );
      tracking.writeEpoch[word] = epoch;
      tracking.writer[word] = lane + 1;
    }
    this.words[word] = bits;
  }

  private race(word: number, what: string): never {
    throw new WgslExecutionError(
      `data race on ${this.name}[${Math.floor(word / this.element.width)}]: ${what} with no workgroupBarrier() between`,
    );
  }

  load(index: number, lane: number): Value {
    const first = this.word(index, lane);
    const { scalar, width } = this.element;
    const component = (offset: number): number =>
      bitcastValue(this.read(first + offset, lane), 'u32', scalar);
    if (width === 1) return component(0);
    return Array.from({ length: width }, (_, offset) => component(offset));
  }

  store(index: number, value: Value, lane: number): void {
    const first = this.word(index, lane);
    const { scalar } = this.element;
    const components = typeof value === 'object' ? value : [Number(value)];
    components.forEach((component, offset) =>
      this.write(first + offset, bitcastValue(component, scalar, 'u32'), lane),
    );
  }
}
