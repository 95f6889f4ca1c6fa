import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForgeError } from './errors.js';
import {
  SizeExpressionError,
  bindSizeExpression,
  evaluateSizeExpression,
  formatSizeExpression,
  parseSizeExpression,
  sizeExpressionNames,
  type SizeExpression,
} from './size-expression.js';

const evaluate = (text: string, values: Record<string, number> = {}): number =>
  evaluateSizeExpression(text, values);

describe('parseSizeExpression', () => {
  it('parses ceil_div(n, 256) into a call', () => {
    expect(parseSizeExpression('ceil_div(n, 256)')).toEqual({
      kind: 'call',
      fn: 'ceil_div',
      args: [
        { kind: 'name', name: 'n' },
        { kind: 'number', value: 256 },
      ],
    });
  });

  it('ignores whitespace', () => {
    expect(parseSizeExpression('  ceil_div( n ,256 )  ')).toEqual(
      parseSizeExpression('ceil_div(n, 256)'),
    );
    expect(parseSizeExpression('\tn\n*2 ')).toEqual(parseSizeExpression('n * 2'));
  });

  it('binds * and / tighter than + and -, all left-associative', () => {
    expect(parseSizeExpression('a + b * c')).toEqual({
      kind: 'binary',
      op: '+',
      left: { kind: 'name', name: 'a' },
      right: {
        kind: 'binary',
        op: '*',
        left: { kind: 'name', name: 'b' },
        right: { kind: 'name', name: 'c' },
      },
    });
    expect(parseSizeExpression('a - b - c')).toEqual(parseSizeExpression('(a - b) - c'));
    expect(parseSizeExpression('a / b / c')).toEqual(parseSizeExpression('(a / b) / c'));
  });

  it.each([
    ['', /unexpected end of expression/],
    ['n +', /unexpected end of expression/],
    ['ceil_div(n, 256', /expected '\)' but found end of expression/],
    ['ceil_div(n)', /expected ',' but found '\)'/],
    ['ceil_div(n, 1, 2)', /expected '\)' but found ','/],
    ['pow(n, 2)', /unknown function 'pow' \(known: ceil_div, min, max\)/],
    ['1 2', /unexpected 2/],
    ['n m', /unexpected m/],
    ['(n', /expected '\)'/],
    [')', /unexpected '\)'/],
    ['-1', /unexpected '-'/],
    ['n % 2', /unexpected character at offset 1/],
    ['1.5', /unexpected character/],
    ['99999999999999999999', /too large/],
    ['4294967296', /too large \(max 4294967295\)/],
    ['n + '.repeat(100) + 'n', /longer than 256 characters/],
  ])('rejects %j', (text, message) => {
    expect(() => parseSizeExpression(text)).toThrow(SizeExpressionError);
    expect(() => parseSizeExpression(text)).toThrow(message);
  });

  it('raises ForgeErrors (user mistakes, not bugs)', () => {
    expect(() => parseSizeExpression('n +')).toThrow(ForgeError);
  });
});

describe('evaluateSizeExpression', () => {
  it('keeps every intermediate result in the u32 range', () => {
    expect(evaluateSizeExpression('65535 * 65537', {})).toBe(0xffffffff);
    expect(() => evaluateSizeExpression('65536 * 65536 / 2', {})).toThrow(
      /65536 \* 65536 exceeds the u32 range/,
    );
    expect(() => evaluateSizeExpression('n * n', { n: 1 << 20 })).toThrow(SizeExpressionError);
  });

  it('evaluates ceil_div, min and max', () => {
    expect(evaluate('ceil_div(n, 256)', { n: 1000 })).toBe(4);
    expect(evaluate('ceil_div(n, 256)', { n: 1024 })).toBe(4);
    expect(evaluate('ceil_div(n, 256)', { n: 1025 })).toBe(5);
    expect(evaluate('ceil_div(n, 256)', { n: 0 })).toBe(0);
    expect(evaluate('min(ceil_div(n, 64), 65535)', { n: 10_000_000 })).toBe(65535);
    expect(evaluate('max(1, n / 32)', { n: 16 })).toBe(1);
  });

  it('respects precedence and parentheses', () => {
    expect(evaluate('1 + 2 * 3')).toBe(7);
    expect(evaluate('(1 + 2) * 3')).toBe(9);
    expect(evaluate('10 - 4 - 3')).toBe(3);
    expect(evaluate('10 - (4 - 3)')).toBe(9);
    expect(evaluate('100 / 10 / 5')).toBe(2);
    expect(evaluate('100 / (10 / 5)')).toBe(50);
    expect(evaluate('2 * 3 + 4 * 5')).toBe(26);
  });

  it('divides as integers (rounding down)', () => {
    expect(evaluate('7 / 2')).toBe(3);
    expect(evaluate('workgroupSize / 32', { workgroupSize: 96 })).toBe(3);
    expect(evaluate('31 / 32')).toBe(0);
  });

  it('rejects unbound names, negative results and division by zero', () => {
    expect(() => evaluate('n + m', { n: 1 })).toThrow(/unbound name\(s\): m/);
    expect(() => evaluate('1 - 2')).toThrow(/negative/);
    expect(() => evaluate('n / 0', { n: 5 })).toThrow(/division of 5 by zero/);
    expect(() => evaluate('ceil_div(1, d)', { d: 0 })).toThrow(SizeExpressionError);
  });

  it('does not look names up on the prototype', () => {
    expect(() => evaluate('constructor + 1')).toThrow(/unbound name\(s\): constructor/);
    expect(() => evaluate('toString')).toThrow(SizeExpressionError);
  });

  it('accepts a parsed expression too', () => {
    expect(evaluateSizeExpression(parseSizeExpression('a * b'), { a: 6, b: 7 })).toBe(42);
  });
});

describe('bindSizeExpression and sizeExpressionNames', () => {
  it('substitutes known names and folds constants, leaving the rest', () => {
    const bound = bindSizeExpression(parseSizeExpression('a * 3 + ceil_div(b, a)'), { a: 2 });
    expect(formatSizeExpression(bound)).toBe('6 + ceil_div(b, 2)');
    expect(sizeExpressionNames(bound)).toEqual(['b']);
  });

  it('lists names once, in first-use order', () => {
    expect(sizeExpressionNames(parseSizeExpression('b + a * b + min(c, a)'))).toEqual([
      'b',
      'a',
      'c',
    ]);
    expect(sizeExpressionNames(parseSizeExpression('1 + 2'))).toEqual([]);
  });
});

describe('formatSizeExpression', () => {
  it.each([
    ['ceil_div(n, 256)', 'ceil_div(n, 256)'],
    ['(a + b) * c', '(a + b) * c'],
    ['(a * b) + c', 'a * b + c'],
    ['(a - b) - c', 'a - b - c'],
    ['a - (b - c)', 'a - (b - c)'],
    ['a - (b + c)', 'a - (b + c)'],
    ['a / (b * c)', 'a / (b * c)'],
    ['((a))', 'a'],
    ['min( a,max(b ,1) )', 'min(a, max(b, 1))'],
    ['ceil_div(a + b, 2) * 3', 'ceil_div(a + b, 2) * 3'],
  ])('formats %j as %j', (text, formatted) => {
    expect(formatSizeExpression(parseSizeExpression(text))).toBe(formatted);
  });

  const leaf: fc.Arbitrary<SizeExpression> = fc.oneof(
    fc.nat({ max: 1000 }).map((value): SizeExpression => ({ kind: 'number', value })),
    fc.constantFrom('a', 'b', 'n').map((name): SizeExpression => ({ kind: 'name', name })),
  );
  const { tree } = fc.letrec<{ tree: SizeExpression }>((recurse) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc
        .record({
          op: fc.constantFrom('+' as const, '-' as const, '*' as const, '/' as const),
          left: recurse('tree'),
          right: recurse('tree'),
        })
        .map((node): SizeExpression => ({ kind: 'binary', ...node })),
      fc
        .record({
          fn: fc.constantFrom('ceil_div' as const, 'min' as const, 'max' as const),
          args: fc.tuple(recurse('tree'), recurse('tree')),
        })
        .map((node): SizeExpression => ({ kind: 'call', ...node })),
    ),
  }));

  /** Evaluates directly from the tree (an oracle independent of the text form). */
  function oracle(node: SizeExpression, values: Record<string, number>): number {
    const value = oracleUnchecked(node, values);
    // Every intermediate result must stay in the u32 range.
    return value > 0xffffffff ? Number.NaN : value;
  }

  function oracleUnchecked(node: SizeExpression, values: Record<string, number>): number {
    switch (node.kind) {
      case 'number':
        return node.value;
      case 'name':
        return values[node.name] ?? Number.NaN;
      case 'binary': {
        const left = oracle(node.left, values);
        const right = oracle(node.right, values);
        if (node.op === '+') return left + right;
        if (node.op === '*') return left * right;
        if (node.op === '-') return right > left ? Number.NaN : left - right;
        return right === 0 ? Number.NaN : Math.floor(left / right);
      }
      case 'call': {
        const [left, right] = node.args.map((arg) => oracle(arg, values)) as [number, number];
        if (node.fn === 'min') return Math.min(left, right);
        if (node.fn === 'max') return Math.max(left, right);
        return right === 0 ? Number.NaN : Math.ceil(left / right);
      }
    }
  }

  it('format then parse gives back the same tree, which evaluates as the tree does', () => {
    fc.assert(
      fc.property(tree, fc.nat({ max: 100 }), fc.nat({ max: 100 }), (expression, a, b) => {
        const text = formatSizeExpression(expression);
        fc.pre(text.length <= 256);
        expect(parseSizeExpression(text)).toEqual(expression);
        const values = { a, b, n: 4096 };
        const expected = oracle(expression, values);
        if (Number.isNaN(expected)) {
          expect(() => evaluateSizeExpression(text, values)).toThrow(SizeExpressionError);
        } else expect(evaluateSizeExpression(text, values)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});
