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
  // Every lane (the usual case, uniform control flow): every subgroup whole.
  if (lanes.length === workgroupSize) {
    active.fill(1);
    subgroupActive.fill(1);
    return;
  }
  active.fill(0);
  for (let position = 0; position < lanes.length; position++) active[lanes[position] ?? 0] = 1;
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
  /** Elements in the array. */
  readonly length: number;
  private readonly tracking: Tracking | undefined;
  /** The words as the element's scalar: a u32 as is, an i32 or f32 reinterpreted (a bitcast). */
  private readonly view: Uint32Array | Int32Array | Float32Array;

  constructor(
    readonly name: string,
    readonly element: ValueType,
    bytes: ArrayBuffer,
    machine?: Machine,
  ) {
    this.words = new Uint32Array(bytes);
    const length = this.words.length;
    this.length = Math.floor(length / element.width);
    const { scalar } = element;
    this.view =
      scalar === 'f32'
        ? new Float32Array(bytes)
        : scalar === 'i32'
          ? new Int32Array(bytes)
          : this.words;
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

  /** Zeroes a workgroup array and forgets its accesses, for the next workgroup. */
  reset(): void {
    this.words.fill(0);
    this.tracking?.writeEpoch.fill(0);
    this.tracking?.readEpoch.fill(0);
  }

  // An index is in bounds when it is a whole number from 0 below the length (`>>> 0` keeps only those).
  private word(index: number, lane: number): number {
    if (index >>> 0 !== index || index >= this.length) {
      throw new WgslExecutionError(
        `${this.name}[${index}] is out of bounds (${this.length} elements), read or written by invocation ${lane}`,
      );
    }
    return index * this.element.width;
  }

  private track(word: number, lane: number, tracking: Tracking): void {
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

  private write(word: number, value: number, lane: number): void {
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
    this.view[word] = value;
  }

  private race(word: number, what: string): never {
    throw new WgslExecutionError(
      `data race on ${this.name}[${Math.floor(word / this.element.width)}]: ${what} with no workgroupBarrier() between`,
    );
  }

  load(index: number, lane: number): Value {
    const first = this.word(index, lane);
    const { width } = this.element;
    const tracking = this.tracking;
    const view = this.view;
    if (tracking !== undefined)
      for (let offset = 0; offset < width; offset++) this.track(first + offset, lane, tracking);
    if (width === 1) return view[first] ?? 0;
    const components: number[] = [];
    for (let offset = 0; offset < width; offset++) components.push(view[first + offset] ?? 0);
    return components;
  }

  /** A lane's load at the index `index` gives it; a storage buffer's scalars without the general path. */
  loader(index: (lane: number) => number): (lane: number) => Value {
    const view = this.view;
    if (this.tracking !== undefined || this.element.width !== 1)
      return (lane) => this.load(index(lane), lane);
    const length = this.length;
    return (lane) => {
      const at = index(lane);
      if (at >>> 0 !== at || at >= length) this.word(at, lane);
      return view[at] ?? 0;
    };
  }

  store(index: number, value: Value, lane: number): void {
    const first = this.word(index, lane);
    if (typeof value === 'object') {
      for (let offset = 0; offset < value.length; offset++)
        this.write(first + offset, value[offset] ?? 0, lane);
    } else this.write(first, Number(value), lane);
  }
}
