import type { Expr, Stmt } from './body.js';
import { assertNever, hasArgs } from './ops.js';

/**
 * Rewrites expressions bottom-up: children first, then `rewrite` on the node with its rewritten
 * children. A node whose children all came back as they were is passed on as it is, not copied:
 * emission rewrites bodies of tens of thousands of nodes several times, and most pass untouched.
 */
export function rewriteExpr(expression: Expr, rewrite: (expression: Expr) => Expr): Expr {
  if (!hasArgs(expression)) return rewrite(expression);
  const args = sameOrMapped(expression.args, (arg) => rewriteExpr(arg, rewrite));
  return rewrite(
    args === expression.args ? expression : ({ ...expression, args } as unknown as Expr),
  );
}

/** `items.map(map)`, or `items` itself when every item maps to itself. */
function sameOrMapped<T>(items: readonly T[], map: (item: T) => T): readonly T[] {
  let mapped: T[] | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as T;
    const next = map(item);
    if (mapped === undefined && next !== item) mapped = items.slice(0, index);
    mapped?.push(next);
  }
  return mapped ?? items;
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
  return [...rewriteBlock(body, rewriter)];
}

/** rewriteBody's work; a block none of whose statements changed is returned as it is. */
function rewriteBlock(body: readonly Stmt[], rewriter: BodyRewriter): readonly Stmt[] {
  const rewrite = rewriter.expression;
  const expr = (expression: Expr): Expr =>
    rewrite === undefined ? expression : rewriteExpr(expression, rewrite);
  const exprs = (expressions: readonly Expr[]): readonly Expr[] =>
    rewrite === undefined ? expressions : sameOrMapped(expressions, expr);
  // The statement with `fields` replaced, or the statement itself when none changed.
  const rebuild = <S extends Stmt>(statement: S, fields: Partial<S>): S => {
    for (const key of Object.keys(fields) as (keyof S)[])
      if (fields[key] !== statement[key]) return { ...statement, ...fields };
    return statement;
  };
  let changed = false;
  const rewritten = body.flatMap((statement): readonly Stmt[] => {
    let rebuilt: Stmt;
    switch (statement.op) {
      case 'let':
      case 'assign':
      case 'reduce':
        rebuilt = rebuild(statement, { value: expr(statement.value) });
        break;
      case 'store':
        rebuilt = rebuild(statement, {
          index: expr(statement.index),
          value: expr(statement.value),
        });
        break;
      case 'if':
        rebuilt = rebuild(statement, {
          condition: expr(statement.condition),
          then: rewriteBlock(statement.then, rewriter),
          else: rewriteBlock(statement.else, rewriter),
        });
        break;
      case 'for':
        rebuilt = rebuild(statement, {
          start: expr(statement.start),
          end: expr(statement.end),
          step: expr(statement.step),
          body: rewriteBlock(statement.body, rewriter),
        });
        break;
      case 'load_vector':
        rebuilt = rebuild(statement, { index: expr(statement.index) });
        break;
      case 'store_vector':
        rebuilt = rebuild(statement, {
          index: expr(statement.index),
          values: exprs(statement.values),
        });
        break;
      case 'shuffle':
        rebuilt = rebuild(statement, {
          value: expr(statement.value),
          lane: expr(statement.lane),
        });
        break;
      case 'mma':
        rebuilt = rebuild(statement, {
          a: exprs(statement.a),
          b: exprs(statement.b),
          c: exprs(statement.c),
        });
        break;
      case 'barrier':
        rebuilt = statement;
        break;
      default:
        return assertNever(statement, 'statement op');
    }
    const replaced = rewriter.statement === undefined ? [rebuilt] : rewriter.statement(rebuilt);
    if (replaced.length !== 1 || replaced[0] !== statement) changed = true;
    return replaced;
  });
  return changed ? rewritten : body;
}

/**
 * Calls `visit` on every statement and expression of a body, depth-first, in rewriteBody's order:
 * an expression after its arguments, a statement after its expressions and nested blocks.
 */
export function walkBody(
  body: readonly Stmt[],
  visit: { statement?: (s: Stmt) => void; expression?: (e: Expr) => void },
): void {
  const onExpression = visit.expression;
  const expr = (expression: Expr): void => {
    if (hasArgs(expression)) for (const arg of expression.args) expr(arg);
    onExpression?.(expression);
  };
  const block = (statements: readonly Stmt[]): void => {
    for (const statement of statements) {
      switch (statement.op) {
        case 'let':
        case 'assign':
        case 'reduce':
          expr(statement.value);
          break;
        case 'store':
          expr(statement.index);
          expr(statement.value);
          break;
        case 'if':
          expr(statement.condition);
          block(statement.then);
          block(statement.else);
          break;
        case 'for':
          expr(statement.start);
          expr(statement.end);
          expr(statement.step);
          block(statement.body);
          break;
        case 'load_vector':
          expr(statement.index);
          break;
        case 'store_vector':
          expr(statement.index);
          statement.values.forEach(expr);
          break;
        case 'shuffle':
          expr(statement.value);
          expr(statement.lane);
          break;
        case 'mma':
          statement.a.forEach(expr);
          statement.b.forEach(expr);
          statement.c.forEach(expr);
          break;
        case 'barrier':
          break;
        default:
          assertNever(statement, 'statement op');
      }
      visit.statement?.(statement);
    }
  };
  block(body);
}
