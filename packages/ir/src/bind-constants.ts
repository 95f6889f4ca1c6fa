import type { Expr, Stmt } from './body.js';
import { constantFaults } from './constant-faults.js';
import { ValidationError } from './errors.js';
import { formatSchedule } from './schedule.js';
import { evaluateSizeExpression } from './size-expression.js';
import { BINARY_SEMANTICS, UNARY_SEMANTICS } from './interpreter/scalar-ops.js';
import { hasArgs, isBinaryExpr, isUnaryExpr } from './ops.js';
import { dropUnreadLocals, pruneConstantBranches, readNames } from './prune.js';
import { rewriteBody } from './rewrite.js';
import type { Schedule, SharedDecl } from './spec.js';

/**
 * Replaces schedule knobs and the workgroup size with constants, then folds integer and bool
 * arithmetic on constants with the IR's own semantics, so no backend computes `256 / 32` at run time;
 * an `if` on a literal keeps only the branch it takes, and the locals only the untaken branch read go.
 * A constant expression that faults at these values (Tint would reject it), or a constant index past
 * a `shared` array's length, is a ValidationError naming the body path and the schedule.
 */
export function bindConstants(
  body: readonly Stmt[],
  schedule: Schedule,
  workgroupSize: number,
  shared: readonly SharedDecl[] = [],
): Stmt[] {
  // Branches on the schedule fold to a literal: the untaken one and the locals only it read go
  // (a local the body never read stays: an op probe keeps its result unread on purpose).
  const bound = dropUnreadLocals(
    pruneConstantBranches(foldConstants(body, schedule, workgroupSize)),
    readNames(body),
  );
  const lengths = new Map(
    shared.map((array) => [array.name, evaluateSizeExpression(array.length, schedule)]),
  );
  const faults = constantFaults(bound, 'body', lengths);
  if (faults.length > 0) {
    const suffix = ` with schedule ${formatSchedule(schedule)}`;
    throw new ValidationError(
      faults.map((fault) => ({ path: fault.path, message: `${fault.message}${suffix}` })),
    );
  }
  return bound;
}

function foldConstants(body: readonly Stmt[], schedule: Schedule, workgroupSize: number): Stmt[] {
  return rewriteBody(body, {
    expression: (expression): Expr => {
      if (expression.op === 'schedule')
        return { op: 'const', type: 'u32', value: schedule[expression.name] ?? 0 };
      if (expression.op === 'builtin' && expression.name === 'workgroup_size')
        return { op: 'const', type: 'u32', value: workgroupSize };
      if (!hasArgs(expression) || expression.op === 'load' || expression.op === 'select')
        return expression;
      const args = expression.args;
      if (
        !args.every(
          (arg) =>
            arg.op === 'const' && (arg.type === 'u32' || arg.type === 'i32' || arg.type === 'bool'),
        )
      )
        return expression;
      const values = args.map((arg) => (arg as { value: number | boolean }).value);
      try {
        const value = isUnaryExpr(expression)
          ? UNARY_SEMANTICS[expression.op](values[0] as number, expression.type)
          : isBinaryExpr(expression)
            ? BINARY_SEMANTICS[expression.op](
                values[0] as number,
                values[1] as number,
                expression.args[0].type,
              )
            : undefined; // other ops are not folded: they stay for the backends
        return value === undefined ? expression : { op: 'const', type: expression.type, value };
      } catch {
        return expression; // a fault such as division by zero stays for run time, as written
      }
    },
  });
}
