import { describe, expect, it } from 'vitest';
import { BINARY_OPS, COMPARISON_OPS, UNARY_OPS, type Expr } from './body.js';
import { ForgeError, InternalError } from './errors.js';
import {
  BINARY_OPERANDS,
  EXPR_OPS,
  STMT_OPS,
  WORD_OPS,
  WORD_OP_NAMES,
  WORD_OP_SIGNATURES,
  assertNever,
  isWordOp,
  isBinaryExpr,
  isExprOp,
  isStmtOp,
  isUnaryExpr,
} from './ops.js';
import { ir } from './index.js';

describe('op registry', () => {
  it('lists every unary and binary op as an expression op with its arity', () => {
    for (const op of UNARY_OPS) expect(EXPR_OPS[op]).toMatchObject({ category: 'unary', arity: 1 });
    for (const op of BINARY_OPS)
      expect(EXPR_OPS[op]).toMatchObject({ category: 'binary', arity: 2 });
    expect(Object.keys(EXPR_OPS)).toHaveLength(15 + UNARY_OPS.length + BINARY_OPS.length);
  });

  it('gives exactly the word ops a fixed signature of three operands', () => {
    const words = Object.entries(EXPR_OPS).filter(([, info]) => info.category === 'word');
    expect(words.map(([op]) => op)).toEqual(Object.keys(WORD_OP_SIGNATURES));
    for (const [, info] of words) expect(info.arity).toBe(3);
  });

  it('gives each op with operands an `args` field, and leaves none without', () => {
    for (const info of Object.values(EXPR_OPS))
      expect(info.fields.includes('args' as never)).toBe(info.arity > 0);
  });

  it('marks exactly the comparison ops as yielding bool', () => {
    const comparisons = BINARY_OPS.filter((op) => BINARY_OPERANDS[op] === 'comparison');
    expect(comparisons).toEqual([...COMPARISON_OPS]);
  });

  it('names the nested blocks of if and for only', () => {
    const withBlocks = Object.entries(STMT_OPS).filter(([, info]) => info.blocks.length > 0);
    expect(withBlocks.map(([op, info]) => [op, info.blocks])).toEqual([
      ['if', ['then', 'else']],
      ['for', ['body']],
    ]);
  });

  it('tells registered ops from other values, including inherited keys', () => {
    expect([isExprOp('fma'), isExprOp('let'), isExprOp('toString'), isExprOp(3)]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect([isStmtOp('reduce'), isStmtOp('fma'), isStmtOp('constructor')]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('narrows expressions by kind', () => {
    const x = ir.f32(2);
    const cases: [Expr, boolean, boolean][] = [
      [ir.sqrt(x), true, false],
      [ir.add(x, x), false, true],
      [ir.fma(x, x, x), false, false],
      [x, false, false],
    ];
    for (const [expression, unary, binary] of cases)
      expect([isUnaryExpr(expression), isBinaryExpr(expression)]).toEqual([unary, binary]);
  });
});

describe('assertNever', () => {
  it('throws naming what was unhandled and the op', () => {
    const unknown = { op: 'dummy' } as never;
    expect(() => assertNever(unknown, 'expression op')).toThrow('unhandled expression op: "dummy"');
  });

  it('throws an InternalError, a bug and not a ForgeError (a user mistake)', () => {
    let thrown: unknown;
    try {
      assertNever({ op: 'dummy' } as never, 'expression op');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InternalError);
    expect(thrown).not.toBeInstanceOf(ForgeError);
    expect((thrown as InternalError).where).toBe('ir');
  });
});

describe('WORD_OPS', () => {
  it('declares each word op once, its semantics agreeing with its result type', () => {
    expect(Object.keys(WORD_OPS)).toEqual(['dot4_i8', 'funnel_shift_right', 'bit_select']);
    for (const op of WORD_OP_NAMES) {
      expect(isWordOp(op)).toBe(true);
      expect(EXPR_OPS[op]).toEqual({ category: 'word', fields: ['op', 'type', 'args'], arity: 3 });
    }
    expect(WORD_OPS.dot4_i8.semantics(0x01_02_03_ff, 0x01_01_01_02, 10)).toBe(10 - 2 + 3 + 2 + 1);
    expect(WORD_OPS.funnel_shift_right.semantics(0x0000_00f0, 0x0000_000f, 4)).toBe(0xf000_000f);
    expect(WORD_OPS.bit_select.semantics(0xffff_0000, 0x1234_5678, 0x9abc_def0)).toBe(0x1234_def0);
    expect(WORD_OP_SIGNATURES.funnel_shift_right.constantFault?.([1, 2, 32])).toMatch(/below 32/);
    expect(WORD_OP_SIGNATURES.funnel_shift_right.constantFault?.([1, 2, 31])).toBeUndefined();
    expect(isWordOp('add')).toBe(false);
    expect(isWordOp('toString')).toBe(false);
  });
});
