import type { ForStmt, LoadVectorStmt, MmaStmt, ReduceStmt, ShuffleStmt, Stmt, StoreStmt, StoreVectorStmt } from '../body.js'; // prettier-ignore
import { ExecutionError } from '../errors.js';
import { f16Bits, f16FromBits } from '../f16.js';
import { assertNever } from '../ops.js';
import { compileExpr, compileNum, slotOf, thrower, type NumEval, type Scope } from './compile-expr.js'; // prettier-ignore
import { noMemory, outOfBounds } from './faults.js';
import type { Memory } from './memory.js';
import { roundTo } from './scalar-ops.js';
import type { Event, Resume, Thread } from './warp.js';

// Statements compiled once per dispatch. A block without barriers or warp operations becomes a
// plain function; only blocks that can suspend a thread become generators, so the common straight
// code and inner loops run without generator overhead.

/** A compiled statement or block for one thread. */
export type Block =
  | { readonly yields: false; readonly run: Run }
  | { readonly yields: true; readonly run: (thread: Thread) => Steps; readonly items?: Item[] };

type Run = (thread: Thread) => void;
type Steps = Generator<Event, void, Resume>;

/**
 * One step of a block that can suspend: plain code, a suspension (the event the thread waits at,
 * then what it does with the results it resumes with), or a nested block.
 */
type Item =
  | { readonly kind: 'plain'; readonly run: Run }
  | {
      readonly kind: 'suspend';
      readonly event: (thread: Thread) => Event;
      readonly resume: (thread: Thread, results: Resume) => void;
    }
  | { readonly kind: 'nested'; readonly run: (thread: Thread) => Steps };

/** A statement that suspends the thread once, without a generator of its own. */
function suspend(
  event: (thread: Thread) => Event,
  resume: (thread: Thread, results: Resume) => void,
): Block {
  const items: Item[] = [{ kind: 'suspend', event, resume }];
  return { yields: true, run: (thread) => runItems(items, thread), items };
}

/** Runs a suspending block's items; loops inline the same code so no generator is made per pass. */
function* runItems(items: readonly Item[], thread: Thread): Steps {
  for (let k = 0; k < items.length; k++) {
    const item = items[k] as Item;
    if (item.kind === 'plain') item.run(thread);
    else if (item.kind === 'suspend') item.resume(thread, yield item.event(thread));
    else yield* item.run(thread);
  }
}

/** Compiles a statement list; a malformed one in an unvalidated spec faults only when run. */
export function compileBlock(statements: readonly Stmt[], scope: Scope): Block {
  let parts: Block[];
  try {
    parts = statements.map((statement) => compileStatement(statement, scope));
  } catch (error) {
    return { yields: false, run: thrower(error) };
  }
  if (parts.every((part) => !part.yields)) return { yields: false, run: sequence(parts) };
  // Runs of consecutive plain statements each become one call; nested suspensions are spliced in.
  const items: Item[] = [];
  let plain: Block[] = [];
  for (const part of parts) {
    if (!part.yields) {
      plain.push(part);
      continue;
    }
    if (plain.length > 0) items.push({ kind: 'plain', run: sequence(plain) });
    plain = [];
    if (part.items !== undefined) items.push(...part.items);
    else items.push({ kind: 'nested', run: part.run });
  }
  if (plain.length > 0) items.push({ kind: 'plain', run: sequence(plain) });
  return { yields: true, run: (thread) => runItems(items, thread), items };
}

function sequence(parts: readonly Block[]): Run {
  const runs = parts.map((part) => part.run as Run);
  const [first, second] = runs;
  if (runs.length === 0) return () => undefined;
  if (runs.length === 1 && first !== undefined) return first;
  if (runs.length === 2 && first !== undefined && second !== undefined) {
    return (thread) => {
      first(thread);
      second(thread);
    };
  }
  return (thread) => {
    for (let k = 0; k < runs.length; k++) (runs[k] as Run)(thread);
  };
}

const plain = (run: Run): Block => ({ yields: false, run });

function compileStatement(statement: Stmt, scope: Scope): Block {
  try {
    return compileStatementNode(statement, scope);
  } catch (error) {
    return plain(thrower(error));
  }
}

function compileStatementNode(statement: Stmt, scope: Scope): Block {
  switch (statement.op) {
    case 'let':
    case 'assign': {
      const slot = slotOf(scope, statement.name);
      const value = compileExpr(statement.value, scope);
      return plain((thread) => {
        thread.locals[slot] = value(thread);
      });
    }
    case 'store':
      return compileStore(statement, scope);
    case 'load_vector':
      return compileLoadVector(statement, scope);
    case 'store_vector':
      return compileStoreVector(statement, scope);
    case 'if': {
      const condition = compileExpr(statement.condition, scope);
      const then = compileBlock(statement.then, scope);
      const otherwise = compileBlock(statement.else, scope);
      if (!then.yields && !otherwise.yields) {
        const [runThen, runElse] = [then.run, otherwise.run];
        return plain((thread) => {
          if (condition(thread) === true) runThen(thread);
          else runElse(thread);
        });
      }
      return {
        yields: true,
        run: function* (thread) {
          const taken = condition(thread) === true ? then : otherwise;
          if (taken.yields) yield* taken.run(thread);
          else taken.run(thread);
        },
      };
    }
    case 'for':
      return compileFor(statement, scope);
    case 'barrier': {
      // Threads share one event: the scheduler only reads it.
      const event: Event = { kind: 'barrier', statement };
      return suspend(
        () => event,
        () => undefined,
      );
    }
    case 'shuffle':
    case 'reduce':
      return compileWarpScalar(statement, scope);
    case 'mma':
      return compileMma(statement, scope);
    default: {
      const unknown: never = statement;
      return plain(() => assertNever(unknown, 'statement op'));
    }
  }
}

/** The memory `name` names, or a fault raised at the point the tree walker looked it up. */
function memoryOf(scope: Scope, name: string): Memory | Error {
  return scope.memories.get(name) ?? noMemory(name);
}

function compileStore(statement: StoreStmt, scope: Scope): Block {
  const index = compileNum(statement.index, scope);
  const memory = memoryOf(scope, statement.memory);
  if (memory instanceof Error) {
    return plain((thread) => {
      index(thread);
      throw memory;
    });
  }
  const value = compileNum(statement.value, scope);
  const { name, data } = memory;
  const length = data.length;
  if (memory.element === 'f16') {
    return plain((thread) => {
      const at = index(thread);
      const stored = value(thread);
      if (!(at >= 0 && at < length)) throw outOfBounds(name, 'write', at, length);
      data[at] = f16Bits(stored);
    });
  }
  return plain((thread) => {
    const at = index(thread);
    const stored = value(thread);
    if (!(at >= 0 && at < length)) throw outOfBounds(name, 'write', at, length);
    data[at] = stored;
  });
}

/** A GPU's vector load or store needs its address aligned to the whole vector: caught here first. */
function checkVectorAlignment(
  op: 'load_vector' | 'store_vector',
  preposition: 'from' | 'to',
  memory: string,
  at: number,
  width: number,
): void {
  if (at % width !== 0)
    throw new ExecutionError(
      `${op} of ${width} ${preposition} '${memory}' at element ${at}, not a multiple of ${width}`,
    );
}

function compileLoadVector(statement: LoadVectorStmt, scope: Scope): Block {
  const index = compileNum(statement.index, scope);
  const width = statement.names.length;
  const slots = statement.names.map((name) => slotOf(scope, name));
  const memory = memoryOf(scope, statement.memory);
  const name = statement.memory;
  return plain((thread) => {
    const at = index(thread);
    checkVectorAlignment('load_vector', 'from', name, at, width);
    if (memory instanceof Error) throw memory;
    for (let k = 0; k < width; k++) thread.locals[slots[k] as number] = read(memory, at + k);
  });
}

function read(memory: Memory, index: number): number {
  const { data } = memory;
  if (!(index >= 0 && index < data.length))
    throw outOfBounds(memory.name, 'read', index, data.length);
  const raw = data[index] as number;
  return memory.element === 'f16' ? f16FromBits(raw) : raw;
}

function compileStoreVector(statement: StoreVectorStmt, scope: Scope): Block {
  const index = compileNum(statement.index, scope);
  const width = statement.values.length;
  const values = statement.values.map((value) => compileNum(value, scope));
  const memory = memoryOf(scope, statement.memory);
  const name = statement.memory;
  return plain((thread) => {
    const at = index(thread);
    checkVectorAlignment('store_vector', 'to', name, at, width);
    const stored = values.map((value) => value(thread));
    if (memory instanceof Error) throw memory;
    stored.forEach((value, k) => memory.write(at + k, value));
  });
}

function compileFor(statement: ForStmt, scope: Scope): Block {
  const { name, type } = statement;
  const slot = slotOf(scope, name);
  const start = compileNum(statement.start, scope);
  const end = compileNum(statement.end, scope);
  const step = compileNum(statement.step, scope);
  const body = compileBlock(statement.body, scope);
  const wrap: (value: number) => number =
    type === 'u32' ? (value) => value >>> 0 : (value) => roundTo(type, value);
  const checked = (by: number): number => {
    if (by <= 0) throw new ExecutionError(`loop '${name}' has step ${by}; it must be positive`);
    return by;
  };
  if (!body.yields) {
    const run = body.run;
    return plain((thread) => {
      let index = start(thread);
      while (index < end(thread)) {
        thread.locals[slot] = index;
        run(thread);
        const next = wrap(index + checked(step(thread)));
        if (next <= index) break; // wrapped past the type's range: a GPU loop would end here too
        index = next;
      }
    });
  }
  const items: readonly Item[] = body.items ?? [{ kind: 'nested', run: body.run }];
  return {
    yields: true,
    run: function* (thread) {
      let index = start(thread);
      while (index < end(thread)) {
        thread.locals[slot] = index;
        for (let k = 0; k < items.length; k++) {
          const item = items[k] as Item;
          if (item.kind === 'plain') item.run(thread);
          else if (item.kind === 'suspend') item.resume(thread, yield item.event(thread));
          else yield* item.run(thread);
        }
        const next = wrap(index + checked(step(thread)));
        if (next <= index) break;
        index = next;
      }
    },
  };
}

function compileWarpScalar(statement: ShuffleStmt | ReduceStmt, scope: Scope): Block {
  const slot = slotOf(scope, statement.name);
  const value = compileNum(statement.value, scope);
  const lane: NumEval | undefined =
    statement.op === 'shuffle' ? compileNum(statement.lane, scope) : undefined;
  return suspend(
    (thread) => {
      const own = value(thread);
      const from = lane === undefined ? 0 : lane(thread);
      return { kind: 'warp', statement, values: [own], lane: from };
    },
    (thread, [result]) => {
      thread.locals[slot] = result as number;
    },
  );
}

function compileMma(statement: MmaStmt, scope: Scope): Block {
  const operands = [...statement.a, ...statement.b, ...statement.c].map((operand) =>
    compileNum(operand, scope),
  );
  const slots = statement.names.map((name) => slotOf(scope, name));
  return suspend(
    (thread) => ({
      kind: 'warp',
      statement,
      values: operands.map((operand) => operand(thread)),
      lane: 0,
    }),
    (thread, results) => {
      slots.forEach((slot, k) => {
        thread.locals[slot] = results[k] as number;
      });
    },
  );
}
