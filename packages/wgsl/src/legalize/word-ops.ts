import { isWordExpr, rewriteBody, type Expr, type Stmt } from '@forge/ir';
import { WORD_LOWERINGS } from '../ops/arithmetic.js';

/**
 * Rewrites each word op WGSL has no builtin for (funnel shifts, bit selects) by its expansion in
 * WORD_LOWERINGS. Run before bindConstants, which then folds the parts on constants.
 */
export function expandWordOps(body: readonly Stmt[]): Stmt[] {
  return rewriteBody(body, {
    expression: (expression): Expr => {
      if (!isWordExpr(expression)) return expression;
      const lowering = WORD_LOWERINGS[expression.op];
      return 'expand' in lowering ? lowering.expand(expression.args) : expression;
    },
  });
}
