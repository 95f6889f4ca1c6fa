import { ir, rewriteBody, type Expr, type Stmt } from '@forge/ir';

/**
 * WGSL has no bit select: `bit_select(mask, a, b)` becomes `(a & mask) | (b & ~mask)`. Run before
 * bindConstants, which then folds `~mask` of a constant mask into one literal.
 */
export function expandBitSelects(body: readonly Stmt[]): Stmt[] {
  return rewriteBody(body, {
    expression: (expression): Expr => {
      if (expression.op !== 'bit_select') return expression;
      const [mask, a, b] = expression.args as readonly [Expr<'u32'>, Expr<'u32'>, Expr<'u32'>];
      return ir.or(ir.and(a, mask), ir.and(b, ir.not(mask)));
    },
  });
}
