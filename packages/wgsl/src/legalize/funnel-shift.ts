import { ir, rewriteBody, type Expr, type Stmt } from '@forge/ir';

/**
 * WGSL has no funnel shift: `funnel_shift_right(lo, hi, s)` becomes `(lo >> s) | ((hi << 1) <<
 * (31 - s))`, exact for s in 0..31 although WGSL takes shift amounts modulo 32 (`hi << (32 - s)`
 * would keep hi at s = 0). Run before bindConstants, which then folds the parts on constants with
 * wrapping IR semantics: Tint rejects a constant `<<` that shifts out a 1 bit.
 */
export function expandFunnelShifts(body: readonly Stmt[]): Stmt[] {
  return rewriteBody(body, {
    expression: (expression): Expr => {
      if (expression.op !== 'funnel_shift_right') return expression;
      const [lo, hi, shift] = expression.args as readonly [Expr<'u32'>, Expr<'u32'>, Expr<'u32'>];
      return ir.or(ir.shr(lo, shift), ir.shl(ir.shl(hi, 1), ir.sub(31, shift)));
    },
  });
}
