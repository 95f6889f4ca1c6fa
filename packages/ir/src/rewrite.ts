import type { Expr, Stmt } from './body.js';
import { assertNever, hasArgs } from './ops.js';

/** Rewrites expressions bottom-up: children first, then `rewrite` on the rebuilt node. */
export function rewriteExpr(expression: Expr, rewrite: (expression: Expr) => Expr): Expr {
  if (!hasArgs(expression)) return rewrite(expression);
  const args = expression.args.map((arg) => rewriteExpr(arg, rewrite));
  return rewrite({ ...expression, args } as unknown as Expr);
}

/** The callbacks `rewriteBody` applies; either may be left out to keep those nodes as they are. */
export interface BodyRewriter {
  /** Applied to every expression, bottom-up. */
  readonly expression?: (expression: Expr) => Expr;
  /** Applied to every statement after its expressions and nested blocks; returns its replacement. */
  readonly statement?: (statement: Stmt) => readonly Stmt[];
}

/** A legalization pass's workhorse: rebuilds a body with rewritten expressions and statements. */
export function rewriteBody(body: readonly Stmt[], rewriter: BodyRewriter): Stmt[] {
  const expr = (expression: Expr): Expr =>
    rewriter.expression === undefined ? expression : rewriteExpr(expression, rewriter.expression);
  return body.flatMap((statement): readonly Stmt[] => {
    let rebuilt: Stmt;
    switch (statement.op) {
      case 'let':
      case 'assign':
      case 'reduce':
        rebuilt = { ...statement, value: expr(statement.value) };
        break;
      case 'store':
        rebuilt = { ...statement, index: expr(statement.index), value: expr(statement.value) };
        break;
      case 'if':
        rebuilt = {
          ...statement,
          condition: expr(statement.condition),
          then: rewriteBody(statement.then, rewriter),
          else: rewriteBody(statement.else, rewriter),
        };
        break;
      case 'for':
        rebuilt = {
          ...statement,
          start: expr(statement.start),
          end: expr(statement.end),
          step: expr(statement.step),
          body: rewriteBody(statement.body, rewriter),
        };
        break;
      case 'load_vector':
        rebuilt = { ...statement, index: expr(statement.index) };
        break;
      case 'store_vector':
        rebuilt = {
          ...statement,
          index: expr(statement.index),
          values: statement.values.map(expr),
        };
        break;
      case 'shuffle':
        rebuilt = { ...statement, value: expr(statement.value), lane: expr(statement.lane) };
        break;
      case 'mma':
        rebuilt = {
          ...statement,
          a: statement.a.map(expr),
          b: statement.b.map(expr),
          c: statement.c.map(expr),
        };
        break;
      case 'barrier':
        rebuilt = statement;
        break;
      default:
        return assertNever(statement, 'statement op');
    }
    return rewriter.statement === undefined ? [rebuilt] : rewriter.statement(rebuilt);
  });
}

/** Calls `visit` on every statement and expression of a body, depth-first. */
export function walkBody(
  body: readonly Stmt[],
  visit: { statement?: (s: Stmt) => void; expression?: (e: Expr) => void },
): void {
  rewriteBody(body, {
    expression: (expression) => {
      visit.expression?.(expression);
      return expression;
    },
    statement: (statement) => {
      visit.statement?.(statement);
      return [statement];
    },
  });
}
