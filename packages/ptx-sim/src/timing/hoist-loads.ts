import { ATOMIC, FIELDS, GLOBAL_LOAD, type WordStream } from '../executor/trace.js';
import type { InstructionTiming } from './instruction-timing.js';

/** Instructions a global load may move up past: about what ptxas's scheduler looks across. */
export const HOIST_WINDOW = 64;

interface TraceEvent {
  readonly start: number;
  readonly length: number;
  readonly pc: number;
  readonly tag: number;
}

function eventsOf(stream: WordStream): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (let at = 0; at < stream.length;) {
    const header = stream.words[at] as number;
    const tag = header & 7;
    const length = 1 + (FIELDS[tag] ?? 0);
    events.push({ start: at, length, pc: header >> 3, tag });
    at += length;
  }
  return events;
}

const overlaps = (a: Int32Array, b: Int32Array): boolean => {
  for (const x of a) for (const y of b) if (x === y) return true;
  return false;
};

/**
 * A warp's trace with each global load moved as early as ptxas would schedule it: up past at most
 * HOIST_WINDOW instructions of its basic block (never past a branch, barrier or other control
 * instruction, a store or atomic, or an instruction that writes a register it reads or touches a
 * register it writes). The simulator runs PTX in program order; the SASS ptxas makes issues
 * independent loads first, so a model of program order would wait for DRAM where the GPU does not.
 */
export function hoistLoads(stream: WordStream, timings: readonly InstructionTiming[]): Int32Array {
  const events = eventsOf(stream);
  const order = events.map((_, index) => index);
  for (let position = 0; position < order.length; position++) {
    const load = events[order[position] as number] as TraceEvent;
    if (load.tag !== GLOBAL_LOAD) continue;
    const timing = timings[load.pc] as InstructionTiming;
    let to = position;
    while (to > 0 && position - to < HOIST_WINDOW) {
      const before = events[order[to - 1] as number] as TraceEvent;
      const other = timings[before.pc] as InstructionTiming;
      const blocked =
        other.issueClass === 'control' ||
        other.barrier ||
        // Stores, reductions and atomics stay ahead of it; loads of any space may be passed.
        (other.issueClass === 'memory' && (other.writes.length === 0 || before.tag === ATOMIC)) ||
        overlaps(other.writes, timing.reads) ||
        overlaps(other.writes, timing.writes) ||
        overlaps(other.reads, timing.writes);
      if (blocked) break;
      to--;
    }
    if (to === position) continue;
    order.splice(to, 0, ...order.splice(position, 1));
  }
  const words = new Int32Array(stream.length);
  let at = 0;
  for (const index of order) {
    const { start, length } = events[index] as TraceEvent;
    words.set(stream.words.subarray(start, start + length), at);
    at += length;
  }
  return words;
}
