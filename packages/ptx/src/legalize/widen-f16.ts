import {
  COMPARISON_OPS,
  ir,
  rewriteBody,
  type BinaryOp,
  type Expr,
  type PtxTarget,
  type Stmt,
  type UnaryOp,
} from '@forge/ir';
import { BINARY_MNEMONICS, FMA_MNEMONIC, UNARY_MNEMONICS } from '../ops/arithmetic.js';

/**
 * f16 math PTX lacks on the target (division, sqrt, min/max before sm_80…) is computed in f32
 * and rounded back to f16 once, which is the correctly rounded f16 result for these ops.
 */
export function widenF16(body: readonly Stmt[], target: PtxTarget): Stmt[] {
  return rewriteBody(body, {
    expression: (expression): Expr => {
      if (!('args' in expression) || expression.args[0].type !== 'f16') return expression;
      const widen = (arg: Expr): Expr => ir.convert('f32', arg);
      const narrow = (value: Expr): Expr =>
        value.type === 'bool' ? value : ir.convert('f16', value);
      if (expression.op === 'fma') {
        if (FMA_MNEMONIC('f16', target) !== undefined) return expression;
        return narrow(ir.fma(...(expression.args.map(widen) as [Expr, Expr, Expr])));
      }
      if (expression.args.length === 1 && expression.op in UNARY_MNEMONICS) {
        const op = expression.op as UnaryOp;
        if (UNARY_MNEMONICS[op]('f16', target) !== undefined) return expression;
        return narrow({ op, type: 'f32', args: [widen(expression.args[0])] });
      }
      if (expression.args.length === 2 && expression.op in BINARY_MNEMONICS) {
        const op = expression.op as BinaryOp;
        if (BINARY_MNEMONICS[op]('f16', target) !== undefined) return expression;
        const type = COMPARISON_OPS.includes(op) ? 'bool' : 'f32';
        return narrow({ op, type, args: [widen(expression.args[0]), widen(expression.args[1])] });
      }
      return expression;
    },
  });
}
