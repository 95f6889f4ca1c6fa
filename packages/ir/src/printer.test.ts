import { describe, expect, it } from 'vitest';
import type { Stmt } from './body.js';
import { defineKernel, type KernelDeclarations } from './builder.js';
import { ForgeError, ValidationError } from './errors.js';
import * as ir from './expressions.js';
import { getKernel } from './kernels/catalog.js';
import {
  printBody,
  printExpr,
  printKernel,
  printKernelLines,
  printStatementHeader,
} from './printer.js';
import { CATALOG } from './kernels/catalog.js';

const DECLARATIONS: KernelDeclarations = {
  id: 'unit',
  semanticVersion: 3,
  entryPoint: 'unit',
  description: 'printer test',
  buffers: [{ group: 1, binding: 2, name: 'out', element: 'u32', access: 'read_write' }],
  params: [{ name: 'limit', type: 'i32' }],
  shared: [],
  schedule: [],
  launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
};

describe('printer', () => {
  it("prints a statement's header as printBody's first line, for every statement of the catalog", () => {
    const visit = (statements: readonly Stmt[]): number =>
      statements.reduce((count, statement) => {
        expect(printStatementHeader(statement)).toBe(printBody([statement])[0]);
        const blocks =
          statement.op === 'if' ? [statement.then, statement.else]
          : statement.op === 'for' ? [statement.body]
          : []; // prettier-ignore
        return count + 1 + blocks.reduce((sum, block) => sum + visit(block), 0);
      }, 0);
    const counts = [...CATALOG.values()].map(({ spec }) => visit(spec.body));
    expect(counts.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(500);
  });

  it('places every dispatch and statement of the catalog on the line printKernel prints it on', () => {
    const preOrder = (statements: readonly Stmt[]): Stmt[] =>
      statements.flatMap((statement) => [
        statement,
        ...(statement.op === 'if' ? [...preOrder(statement.then), ...preOrder(statement.else)]
          : statement.op === 'for' ? preOrder(statement.body)
          : []), // prettier-ignore
      ]);
    let stages = 0;
    for (const { spec } of CATALOG.values()) {
      const printed = printKernelLines(spec);
      expect(printed.text).toBe(printKernel(spec));
      const lines = printed.text.split('\n');
      const bodies = [spec.body, ...(spec.stages ?? []).map((stage) => stage.body)];
      expect(printed.dispatches.map((dispatch) => lines[dispatch.line - 1])).toEqual([
        expect.stringMatching(/^kernel /),
        ...(spec.stages ?? []).map((stage) => `then ${stage.entryPoint}`),
      ]);
      bodies.forEach((body, index) => {
        const statements = preOrder(body);
        const at = printed.dispatches[index]?.statements ?? [];
        expect(at.map((line) => lines[line - 1]?.trim())).toEqual(
          statements.map(printStatementHeader),
        );
      });
      stages += spec.stages?.length ?? 0;
    }
    expect(stages).toBeGreaterThan(0);
  });

  it('prints affine-f32', () => {
    expect(printKernel(getKernel('affine-f32').spec)).toBe(
      [
        'kernel affine-f32 v1 affine_f32(x: read f32[] @0:0, y: read_write f32[] @0:1, n: u32, scale: f32, bias: f32)',
        '  workgroup workgroupSize, grid (min(ceil_div(n, workgroupSize), 65535), 1, 1)',
        '  let stride: u32 = (num_workgroups.x * schedule.workgroupSize)',
        '  for i: u32 = ((workgroup_id.x * schedule.workgroupSize) + local_id); < n; += stride {',
        '    y[i] = fma(x[i], scale, bias)',
        '  }',
        '',
      ].join('\n'),
    );
  });

  it('prints every statement kind, else branches and typed constants', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      const lane = b.let('lane', b.laneId());
      const flag = b.let('flag', ir.lt(ir.convert('i32', lane), b.param('limit')));
      b.if(
        flag,
        (then) => then.store('out', lane, ir.bitcast('u32', ir.f32(1.5))),
        (otherwise) => otherwise.assign(lane, ir.select(ir.bool(false), ir.u32(1), ir.u32(2))),
      );
      b.barrier();
      b.shuffle('down', 'next', lane, ir.u32(1));
      b.reduce('max', 'top', ir.neg(ir.i32(-3)));
    });
    expect(printBody(spec.body)).toEqual([
      'let lane: u32 = lane_id',
      'let flag: bool = (convert<i32>(lane) < limit)',
      'if flag {',
      '  out[lane] = bitcast<u32>(1.5f32)',
      '} else {',
      '  lane = select(false, 1u32, 2u32)',
      '}',
      'barrier',
      'let next: u32 = shuffle_down(lane, 1u32)',
      'let top: i32 = warp_reduce_max(neg(-3i32))',
    ]);
    expect(printKernel(spec).split('\n')[0]).toBe(
      'kernel unit v3 unit(out: read_write u32[] @1:2, limit: i32)',
    );
  });

  it('prints infix operators with parentheses', () => {
    expect(printExpr(ir.shl(ir.u32(1), ir.rem(ir.u32(7), ir.u32(3))))).toBe(
      '(1u32 << (7u32 % 3u32))',
    );
    expect(printExpr(ir.builtin('workgroup_id', 'z'))).toBe('workgroup_id.z');
  });
});

describe('builder', () => {
  it('rejects unknown params, knobs and memories with a ForgeError', () => {
    expect(() => defineKernel(DECLARATIONS, (b) => b.param('nope'))).toThrow(ForgeError);
    expect(() => defineKernel(DECLARATIONS, (b) => b.schedule('nope'))).toThrow(/no schedule knob/);
    expect(() => defineKernel(DECLARATIONS, (b) => b.load('nope', ir.u32(0)))).toThrow(
      /no buffer or shared array named 'nope'/,
    );
  });

  it('validates the finished spec', () => {
    expect(() => defineKernel(DECLARATIONS, (b) => b.store('out', ir.u32(0), ir.f32(1)))).toThrow(
      ValidationError,
    );
  });

  it('infers loop index types from the start value', () => {
    const spec = defineKernel(DECLARATIONS, (b) => {
      b.for('i', { start: ir.i32(-2), end: b.param('limit'), step: ir.i32(1) }, (body, i) =>
        body.store('out', ir.u32(0), ir.convert('u32', i)),
      );
    });
    const loop = spec.body[0];
    expect(loop?.op === 'for' ? loop.type : undefined).toBe('i32');
  });
});
