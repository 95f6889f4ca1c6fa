import { WARP_SIZE, type MmaStmt, type ReduceStmt, type ShuffleStmt, type Stmt } from '../body.js';
import { ExecutionError } from '../errors.js';
import { mmaSemantics } from '../mma.js';
import { roundTo, type Value } from './scalar-ops.js';

// The interpreter's threads and how a warp operation completes once all 32 lanes reach it.

/** One thread's identity and its locals, one slot per local name (undefined until set). */
export interface Thread {
  readonly localId: number;
  readonly locals: (Value | undefined)[];
}

/** A warp operation's inputs from one lane: shuffle/reduce take `[value]`, mma its a, b and c. */
export type Event =
  | { kind: 'barrier'; statement: Stmt }
  | { kind: 'warp'; statement: ShuffleStmt | ReduceStmt | MmaStmt; values: number[]; lane: number };

/** What a thread resumes with: a warp operation's results in that lane (none after a barrier). */
export type Resume = readonly number[];

/** A thread as the scheduler runs it: its steps and what it waits at. */
export interface Running {
  readonly thread: Thread;
  readonly steps: Generator<Event, void, Resume>;
  waiting: Event | undefined;
  resume: Resume;
  done: boolean;
}

/** Completes every warp whose 32 lanes all wait at the same warp operation; returns whether any did. */
export function resolveWarps(threads: Running[]): boolean {
  let progressed = false;
  for (let base = 0; base < threads.length; base += WARP_SIZE) {
    const lanes = threads.slice(base, base + WARP_SIZE);
    const first = lanes[0]?.waiting;
    if (
      first?.kind !== 'warp' ||
      !lanes.every((lane) => lane.waiting?.statement === first.statement)
    )
      continue;
    if (lanes.length !== WARP_SIZE)
      throw new ExecutionError(
        `warp ${first.statement.op} in a partial warp of ${lanes.length} lanes`,
      );
    const inputs = lanes.map((lane) => (lane.waiting as { values: number[] }).values);
    const values = inputs.map((lane) => lane[0] as number);
    const statement = first.statement;
    const results =
      statement.op === 'mma'
        ? mmaLanes(statement, inputs)
        : (statement.op === 'shuffle'
            ? shuffle(
                statement,
                values,
                lanes.map((lane) => (lane.waiting as { lane: number }).lane),
              )
            : reduce(statement, values)
          ).map((value) => [value]);
    lanes.forEach((lane, index) => {
      lane.resume = results[index] as number[];
      lane.waiting = undefined;
    });
    progressed = true;
  }
  return progressed;
}

/** An mma's D per lane from each lane's inputs: its a words, then b words, then c values. */
function mmaLanes(statement: MmaStmt, inputs: readonly number[][]): number[][] {
  const a = statement.a.length;
  const b = statement.b.length;
  return mmaSemantics(
    statement.shape,
    inputs.map((lane) => lane.slice(0, a)),
    inputs.map((lane) => lane.slice(a, a + b)),
    inputs.map((lane) => lane.slice(a + b)),
  );
}

function shuffle(statement: ShuffleStmt, values: number[], sources: number[]): number[] {
  return values.map((own, lane) => {
    const argument = sources[lane] as number;
    const source = {
      xor: lane ^ argument,
      down: lane + argument,
      up: lane - argument,
      idx: argument,
    }[statement.mode];
    return source >= 0 && source < WARP_SIZE ? (values[source] as number) : own;
  });
}

// Butterfly order (xor 16, 8, 4, 2, 1), the order the backends' shuffle sequences use.
function reduce(statement: ReduceStmt, values: number[]): number[] {
  let current = values;
  for (let offset = WARP_SIZE / 2; offset >= 1; offset /= 2) {
    current = current.map((own, lane) => {
      const other = current[lane ^ offset] as number;
      if (statement.reduction === 'add') return roundTo(statement.type, own + other);
      return statement.reduction === 'min' ? Math.min(own, other) : Math.max(own, other);
    });
  }
  return current;
}
