import {
  COMPARISON_OPS,
  assertNever,
  ir,
  isBinaryExpr,
  isUnaryExpr,
  isWordExpr,
  rewriteBody,
  type Expr,
  type Stmt,
} from '@forge/ir';
import { BINARY_MNEMONICS, FMA_MNEMONIC, UNARY_MNEMONICS } from '../ops/arithmetic.js';
import type { PtxTarget } from '../targets.js';

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
      switch (expression.op) {
        case 'fma':
          if (FMA_MNEMONIC('f16', target) !== undefined) return expression;
          return narrow(ir.fma(...(expression.args.map(widen) as [Expr, Expr, Expr])));
        // Conversions, selects and loads move f16 values without f16 arithmetic.
        case 'select':
        case 'convert':
        case 'bitcast':
        case 'unpack_half':
        case 'pack_half':
        case 'load':
          return expression;
        default:
          if (isWordExpr(expression)) return expression;
          if (isUnaryExpr(expression)) {
            const op = expression.op;
            if (UNARY_MNEMONICS[op]('f16', target) !== undefined) return expression;
            return narrow({ op, type: 'f32', args: [widen(expression.args[0])] });
          }
          if (isBinaryExpr(expression)) {
            const op = expression.op;
            if (BINARY_MNEMONICS[op]('f16', target) !== undefined) return expression;
            const type = COMPARISON_OPS.includes(op) ? 'bool' : 'f32';
            return narrow({
              op,
              type,
              args: [widen(expression.args[0]), widen(expression.args[1])],
            });
          }
          return assertNever(expression, 'expression op');
      }
    },
  });
}
