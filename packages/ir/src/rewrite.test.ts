import { describe, expect, it } from 'vitest';
import type { Expr, Stmt } from './body.js';
import { add, mul, u32 } from './expressions.js';
import { rewriteBody, rewriteExpr, walkBody } from './rewrite.js';

const variable = (name: string): Expr<'u32'> => ({ op: 'var', type: 'u32', name });

// let a = x + 1; if (a < 4) { b = a * 2 } else {}; for i in [0, a) step 1 { y[i] = b }
const BODY: readonly Stmt[] = [
  { op: 'let', name: 'a', type: 'u32', value: add(variable('x'), 1) },
  {
    op: 'if',
    condition: { op: 'lt', type: 'bool', args: [variable('a'), u32(4)] },
    then: [{ op: 'assign', name: 'b', value: mul(variable('a'), 2) }],
    else: [],
  },
  {
    op: 'for',
    name: 'i',
    type: 'u32',
    start: u32(0),
    end: variable('a'),
    step: u32(1),
    body: [{ op: 'store', memory: 'y', index: variable('i'), value: variable('b') }],
  },
];

/** A node as a short label: its op, and its name or a constant's value. */
const label = (node: Expr | Stmt): string =>
  node.op === 'const' ? `const ${String(node.value)}` : 'name' in node ? `${node.op} ${node.name}` : node.op; // prettier-ignore

describe('rewriteExpr and rewriteBody', () => {
  it('pass an unchanged node on as it is, and copy only the path to a change', () => {
    const expression = add(mul(variable('x'), 2), variable('y'));
    expect(rewriteExpr(expression, (node) => node)).toBe(expression);
    const renamed = rewriteExpr(expression, (node) =>
      node.op === 'var' && node.name === 'y' ? variable('z') : node,
    );
    expect(renamed).not.toBe(expression);
    expect(renamed).toEqual(add(mul(variable('x'), 2), variable('z')));
    // The untouched left operand is the same object.
    expect((renamed as { args: readonly Expr[] }).args[0]).toBe(
      (expression as { args: readonly Expr[] }).args[0],
    );
  });

  it('rebuild only the statements whose expressions or blocks changed', () => {
    const same = rewriteBody(BODY, { expression: (node) => node });
    expect(same).toEqual(BODY);
    expect(same).not.toBe(BODY); // a fresh array the caller owns
    same.forEach((statement, index) => expect(statement).toBe(BODY[index]));
    const renamed = rewriteBody(BODY, {
      expression: (node) => (node.op === 'var' && node.name === 'b' ? variable('c') : node),
    });
    expect(renamed[0]).toBe(BODY[0]);
    expect(renamed[1]).toBe(BODY[1]);
    expect(renamed[2]).not.toBe(BODY[2]);
    expect(JSON.stringify(renamed)).toBe(
      JSON.stringify(BODY).replace('"type":"u32","name":"b"', '"type":"u32","name":"c"'),
    );
  });
});

describe('walkBody', () => {
  it("visits in rewriteBody's order: arguments, then the node; a statement after its blocks", () => {
    const walked: string[] = [];
    walkBody(BODY, {
      expression: (node) => walked.push(label(node)),
      statement: (node) => walked.push(label(node)),
    });
    const rewritten: string[] = [];
    rewriteBody(BODY, {
      expression: (node) => (rewritten.push(label(node)), node),
      statement: (node) => (rewritten.push(label(node)), [node]),
    });
    expect(walked).toEqual(rewritten);
    expect(walked).toEqual([
      'var x',
      'const 1',
      'add',
      'let a',
      'var a',
      'const 4',
      'lt',
      'var a',
      'const 2',
      'mul',
      'assign b',
      'if',
      'const 0',
      'var a',
      'const 1',
      'var i',
      'var b',
      'store',
      'for i',
    ]);
  });
});
