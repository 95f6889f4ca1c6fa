import type { Stmt } from './body.js';
import { rewriteBody, walkBody } from './rewrite.js';

/**
 * Replaces each `if` whose condition is a bool literal by the statements of the branch it takes,
 * inlined (local names are unique in a body, so they cannot clash in the enclosing block).
 */
export function pruneConstantBranches(body: readonly Stmt[]): Stmt[] {
  return rewriteBody(body, {
    statement: (statement) => {
      if (statement.op !== 'if' || statement.condition.op !== 'const') return [statement];
      return statement.condition.value === true || statement.condition.value === 1
        ? statement.then
        : statement.else;
    },
  });
}

/** The names of the locals some expression of `body` reads. */
export function readNames(body: readonly Stmt[]): Set<string> {
  const read = new Set<string>();
  walkBody(body, {
    expression: (expression) => {
      if (expression.op === 'var') read.add(expression.name);
    },
  });
  return read;
}

/**
 * Drops the locals nothing reads (a `let`, `reduce`, `shuffle` or `load_vector` and every `assign`
 * to it), until none is left: what a pruned branch used to read goes with it, so no backend sees
 * the registers of code that a schedule leaves out. Expressions have no side effects to keep. With
 * `droppable`, only those names may go (the ones the body read before its branches were pruned):
 * a local its author left unread, as a probe of an op does, stays.
 */
export function dropUnreadLocals(body: readonly Stmt[], droppable?: ReadonlySet<string>): Stmt[] {
  let current = [...body];
  for (;;) {
    const read = readNames(current);
    let dropped = false;
    const unread = (names: readonly string[]): boolean => {
      const none = names.every(
        (name) => !read.has(name) && (droppable === undefined || droppable.has(name)),
      );
      dropped ||= none;
      return none;
    };
    current = rewriteBody(current, {
      statement: (statement) => {
        switch (statement.op) {
          case 'let':
          case 'assign':
          case 'reduce':
          case 'shuffle':
            return unread([statement.name]) ? [] : [statement];
          case 'load_vector':
            return unread(statement.names) ? [] : [statement];
          default:
            return [statement];
        }
      },
    });
    if (!dropped) return current;
  }
}
