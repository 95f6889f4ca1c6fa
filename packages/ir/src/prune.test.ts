import { describe, expect, it } from 'vitest';
import type { Expr, Stmt } from './body.js';
import { bindConstants } from './bind-constants.js';
import { add, bool, f32, gt, u32 } from './expressions.js';
import { dropUnreadLocals, pruneConstantBranches } from './prune.js';

const v = (name: string) => ({ op: 'var', type: 'f32', name }) as const;
const knob = { op: 'schedule', type: 'u32', name: 'heads' } as const;
const store = (value: Expr): Stmt => ({
  op: 'store',
  memory: 'out',
  index: u32(0),
  value,
});

describe('pruneConstantBranches', () => {
  it('inlines the branch a literal condition takes and keeps the rest', () => {
    const body: Stmt[] = [
      {
        op: 'if',
        condition: bool(true),
        then: [{ op: 'let', name: 'a', type: 'f32', value: f32(1) }],
        else: [{ op: 'let', name: 'b', type: 'f32', value: f32(2) }],
      },
      { op: 'if', condition: bool(false), then: [store(v('a'))], else: [] },
      { op: 'if', condition: gt(u32(1), u32(0)), then: [store(v('a'))], else: [] },
    ];
    const pruned = pruneConstantBranches(body);
    expect(pruned.slice(0, 1)).toEqual([{ op: 'let', name: 'a', type: 'f32', value: f32(1) }]);
    // Only literals: an unfolded comparison stays a branch.
    expect(pruned.slice(1).map((statement) => statement.op)).toEqual(['if']);
  });
});

describe('dropUnreadLocals', () => {
  it('drops unread locals and their assigns, transitively, and keeps what a store reads', () => {
    const body: Stmt[] = [
      { op: 'let', name: 'kept', type: 'f32', value: f32(1) },
      { op: 'let', name: 'source', type: 'f32', value: f32(2) },
      { op: 'let', name: 'dead', type: 'f32', value: v('source') },
      { op: 'assign', name: 'dead', value: add(v('dead'), v('source')) },
      { op: 'reduce', reduction: 'max', name: 'gone', type: 'f32', value: v('kept') },
      { op: 'load_vector', names: ['x0', 'x1'], type: 'f32', memory: 'out', index: u32(0) },
      store(v('kept')),
    ];
    const kept = dropUnreadLocals(body);
    // `dead` reads itself in its assign, so it stays: a self-read keeps a local (conservative).
    expect(kept.map((s) => ('name' in s ? s.name : s.op))).toEqual([
      'kept',
      'source',
      'dead',
      'dead',
      'store',
    ]);
    expect(dropUnreadLocals([body[0]!, body[1]!, body[2]!, store(v('kept'))])).toEqual([
      body[0],
      store(v('kept')),
    ]);
  });
});

describe('bindConstants on a schedule branch', () => {
  it('keeps the code of the heads a schedule carries, and none of the registers of the rest', () => {
    const body: Stmt[] = [
      { op: 'let', name: 'm0', type: 'f32', value: f32(0) },
      { op: 'let', name: 'm1', type: 'f32', value: f32(0) },
      {
        op: 'if',
        condition: gt(knob, u32(1)),
        then: [{ op: 'assign', name: 'm1', value: f32(3) }, store(v('m1'))],
        else: [store(v('m0'))],
      },
    ];
    const names = (heads: number): string[] =>
      bindConstants(body, { heads }, 32).map((s) => ('name' in s ? s.name : s.op));
    expect(names(1)).toEqual(['m0', 'store']);
    expect(names(2)).toEqual(['m1', 'm1', 'store']);
  });
});

describe('dropUnreadLocals with droppable names', () => {
  it('keeps a local outside `droppable` even when nothing reads it', () => {
    const body: Stmt[] = [
      { op: 'let', name: 'probe', type: 'f32', value: f32(1) },
      { op: 'let', name: 'orphan', type: 'f32', value: f32(2) },
      store(f32(0)),
    ];
    expect(dropUnreadLocals(body, new Set(['orphan']))).toEqual([body[0], body[2]]);
    expect(dropUnreadLocals(body, new Set())).toEqual(body);
  });
});
