import { describe, expect, it } from 'vitest';
import type { EntryFunction, Statement } from '../ast.js';
import { parsePtx } from './index.js';

const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n';

function bodyOf(source: string): readonly Statement[] {
  return entryOf(source).body;
}

function entryOf(source: string): EntryFunction {
  const entry = parsePtx(`${HEADER}${source}\n}\n`).entries[0];
  if (entry === undefined) throw new Error('no entry');
  return entry;
}

function summary(statement: Statement | undefined): string {
  if (statement === undefined) return 'none';
  if (statement.kind === 'label') return `${statement.location.line} ${statement.name}:`;
  const guard = statement.guard
    ? `@${statement.guard.negated ? '!' : ''}${statement.guard.register} `
    : '';
  const opcode = [statement.opcode, ...statement.modifiers].join('.');
  return `${statement.location.line} ${guard}${opcode}/${statement.operands.length}`;
}

describe('labels', () => {
  it.each(['$L__BB0_2', '$L_endif_3', 'LBB0_1', '__label', 'L$1'])(
    'reads label %s on its own line',
    (name) => {
      expect(bodyOf(`${name}:\nret;`)).toMatchObject([
        { kind: 'label', name, location: { line: 6, text: `${name}:` } },
        { kind: 'instruction', opcode: 'ret' },
      ]);
    },
  );

  it('reads a label before an instruction on the same line', () => {
    expect(bodyOf('$L1: add.u32 %r1, %r1, 1;\nLOOP:bra LOOP;').map(summary)).toEqual([
      '6 $L1:',
      '6 add.u32/3',
      '7 LOOP:',
      '7 bra/1',
    ]);
  });

  it('reads consecutive labels', () => {
    expect(bodyOf('$L_endloop_5:\n$L_endif_1:\n\tret;').map(summary)).toEqual([
      '6 $L_endloop_5:',
      '7 $L_endif_1:',
      '8 ret/0',
    ]);
  });
});

describe('instructions', () => {
  it('splits opcodes from their modifiers', () => {
    const body = bodyOf(
      [
        'shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;',
        'ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];',
        'cvt.rn.f16x2.f32 %r1, %f1, %f2;',
        'ld.global.nc.L1::no_allocate.L2::128B.f32 %f1, [%rd1];',
        'exit;',
      ].join('\n'),
    );
    expect(body.map((statement) => (statement.kind === 'instruction' ? [statement.opcode, statement.modifiers] : []))).toEqual([
      ['shfl', ['sync', 'bfly', 'b32']],
      ['ld', ['global', 'nc', 'v4', 'f32']],
      ['cvt', ['rn', 'f16x2', 'f32']],
      ['ld', ['global', 'nc', 'L1::no_allocate', 'L2::128B', 'f32']],
      ['exit', []],
    ]); // prettier-ignore
  });

  it('reads guards with and without negation, with or without spaces', () => {
    expect(bodyOf('@%p1 bra $L1;\n@!%p2 ret;\n@ ! %p3 exit;\n$L1: ret;').map(summary)).toEqual([
      '6 @%p1 bra/1',
      '7 @!%p2 ret/0',
      '8 @!%p3 exit/0',
      '9 $L1:',
      '9 ret/0',
    ]);
  });

  it('reads several statements on one line', () => {
    expect(bodyOf('mov.u32 %r1, 1; mov.u32 %r2, 2;add.u32 %r3, %r1, %r2;').map(summary)).toEqual([
      '6 mov.u32/2',
      '6 mov.u32/2',
      '6 add.u32/3',
    ]);
  });

  it('reads a statement spanning lines, located on its first line', () => {
    const body = bodyOf(
      'mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32\n  {%f1, %f2,\n   %f3, %f4},\n  {%r1, %r2}, {%r3},\n  {%f5, %f6, %f7, %f8};\nret;',
    );
    expect(body.map(summary)).toEqual([
      '6 mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32/4',
      '11 ret/0',
    ]);
    expect(body[0]?.location.text).toBe('mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32');
  });

  it('ignores comments inside and between statements, including multi-line ones', () => {
    const body = bodyOf(
      'add.u32 %r1, /* left */ %r2, // trailing\n %r3;\n/* a\nmulti-line\ncomment; */ mul.lo.u32 %r4, %r1, 2;\n// ret;\nret;',
    );
    expect(body.map(summary)).toEqual(['6 add.u32/3', '10 mul.lo.u32/3', '12 ret/0']);
  });

  it('flattens nested { } blocks into the body', () => {
    const entry = entryOf('{\n.reg .b16 %t;\n{ cvt.rn.f16.f32 %t, %f1; }\n}\nret;');
    expect(entry.registers.map((register) => register.name)).toEqual(['%t']);
    expect(entry.body.map(summary)).toEqual(['8 cvt.rn.f16.f32/2', '10 ret/0']);
  });

  it('handles CRLF line endings', () => {
    const module = parsePtx(
      '.version 7.0\r\n.target sm_80\r\n.entry k()\r\n{\r\n\tmov.u32 %r1, 1;\r\n\tret;\r\n}\r\n',
    );
    expect(module.entries[0]?.body.map(summary)).toEqual(['5 mov.u32/2', '6 ret/0']);
    expect(module.entries[0]?.body[0]?.location.text).toBe('mov.u32 %r1, 1;');
  });
});

describe('a large module', () => {
  // Its parse time is a figure of `pnpm bench` (target 100 ms): a wall-clock bound here fails under load.
  it('parses a 2,000-line module statement by statement, lines and labels kept', () => {
    const lines: string[] = [
      '.reg .b32 %r<100>;',
      '.reg .pred %p<4>;',
      '.reg .f32 %f<20>;',
      '.reg .b64 %rd<10>;',
    ];
    for (let i = 0; i < 500; i++) {
      lines.push(`$L_${i}:`);
      lines.push(
        `\t@!%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd${i % 10}+${i * 16}]; // load ${i}`,
      );
      lines.push(`\tshfl.sync.bfly.b32 %r${i % 100}|%p2, %r2, 0x10, 31, -1;`);
      lines.push(`\tfma.rn.f32 %f5, %f1, 0f3F800000, %f${i % 20};`);
    }
    const body = entryOf(lines.join('\n')).body;
    expect(body).toHaveLength(2000);
    expect(body.slice(0, 4).map(summary)).toEqual([
      '10 $L_0:',
      '11 @!%p1 ld.global.nc.v4.f32/2',
      '12 shfl.sync.bfly.b32/5',
      '13 fma.rn.f32/4',
    ]);
    expect(summary(body[1996])).toBe('2006 $L_499:');
    expect(summary(body[1999])).toBe('2009 fma.rn.f32/4');
  });
});
