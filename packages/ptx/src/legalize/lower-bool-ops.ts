import { ir, rewriteBody, type Expr, type Stmt } from '@forge/ir';
import type { PtxTarget } from '../targets.js';

/** setp and selp have no .pred form: bool equality becomes xor, bool select becomes and/or. */
export function lowerBoolOps(body: readonly Stmt[], _target: PtxTarget): Stmt[] {
  return rewriteBody(body, {
    expression: (expression): Expr => {
      if (expression.op === 'ne' && expression.args[0].type === 'bool')
        return ir.xor(...expression.args);
      if (expression.op === 'eq' && expression.args[0].type === 'bool')
        return ir.not(ir.xor(...expression.args));
      if (expression.op === 'select' && expression.type === 'bool') {
        const [condition, ifTrue, ifFalse] = expression.args;
        return ir.or(ir.and(condition, ifTrue), ir.and(ir.not(condition), ifFalse));
      }
      return expression;
    },
  });
}
