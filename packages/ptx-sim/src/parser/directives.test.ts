import { describe, expect, it } from 'vitest';
import type { EntryFunction } from '../ast.js';
import { parsePtx } from './index.js';

const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n';

function onlyEntry(source: string): EntryFunction {
  const entry = parsePtx(`${HEADER}${source}`).entries[0];
  if (entry === undefined) throw new Error('no entry');
  return entry;
}

describe('module header', () => {
  it('reads .version, .target and .address_size', () => {
    expect(parsePtx('.version 9.0\n.target sm_90a\n.address_size 32\n')).toEqual({
      version: '9.0',
      target: 'sm_90a',
      addressSize: 32,
      variables: [],
      entries: [],
      files: new Map(),
    });
  });

  it('reads .file names (nvcc -lineinfo), with or without timestamp and size', () => {
    const module = parsePtx(
      '.version 7.0\n.target sm_80\n.file 1 "/a/k.cu", 1700000000, 99\n.file 2 "b.h"\n',
    );
    expect(module.files).toEqual(
      new Map([
        [1, '/a/k.cu'],
        [2, 'b.h'],
      ]),
    );
  });

  it('keeps the first sm_ of a .target list', () => {
    expect(parsePtx('.version 7.0\n.target sm_80, texmode_independent\n').target).toBe('sm_80');
    expect(parsePtx('.version 7.0\n.target texmode_independent, sm_75, sm_80\n').target).toBe(
      'sm_75',
    );
  });

  it('defaults .address_size to 32 as the PTX ISA does', () => {
    expect(parsePtx('.version 7.0\n.target sm_80\n').addressSize).toBe(32);
  });

  it('skips comments and blank lines anywhere', () => {
    const module = parsePtx(
      '// header\n/* block\n comment */ .version /* inline */ 7.0\n\n\n.target sm_80 // trailing\n',
    );
    expect(module).toMatchObject({ version: '7.0', target: 'sm_80' });
  });
});

describe('entries', () => {
  it('reads linkage, an empty parameter list and a missing list', () => {
    const module = parsePtx(
      `${HEADER}.visible .entry a()\n{\nret;\n}\n.weak .entry b\n{\nret;\n}\n.entry c(){ret;}\n`,
    );
    expect(module.entries.map((entry) => [entry.name, entry.visible, entry.params.length])).toEqual(
      [
        ['a', true, 0],
        ['b', false, 0],
        ['c', false, 0],
      ],
    );
    expect(module.entries[1]?.location).toEqual({ line: 8, text: '.weak .entry b' });
  });

  it('reads scalar, aligned array and pointer parameters in order', () => {
    const entry = onlyEntry(
      [
        '.visible .entry k(',
        '  .param .u64 .ptr .global .align 1 k_param_0,',
        '  .param .align 4 .b8 args[12],',
        '  .param .f32 scale,',
        '  .param .b8 .align 8 bytes[16],',
        '  .param .u64 .ptr .align 16 k_param_4',
        ')',
        '{',
        'ret;',
        '}',
      ].join('\n'),
    );
    expect(entry.params).toEqual([
      { space: 'param', type: 'u64', name: 'k_param_0', align: 8, location: { line: 5, text: '.param .u64 .ptr .global .align 1 k_param_0,' } },
      { space: 'param', type: 'b8', name: 'args', align: 4, length: 12, location: { line: 6, text: '.param .align 4 .b8 args[12],' } },
      { space: 'param', type: 'f32', name: 'scale', align: 4, location: { line: 7, text: '.param .f32 scale,' } },
      { space: 'param', type: 'b8', name: 'bytes', align: 8, length: 16, location: { line: 8, text: '.param .b8 .align 8 bytes[16],' } },
      { space: 'param', type: 'u64', name: 'k_param_4', align: 8, location: { line: 9, text: '.param .u64 .ptr .align 16 k_param_4' } },
    ]); // prettier-ignore
  });

  it('keeps .reqntid and .maxntid and accepts .minnctapersm and .maxnreg', () => {
    const entry = onlyEntry(
      '.visible .entry k()\n.maxntid 128, 2\n.reqntid 64, 2, 1\n.minnctapersm 4\n.maxnreg 64\n{\nret;\n}\n',
    );
    expect(entry.requiredThreads).toEqual([64, 2, 1]);
    expect(entry.maxThreads).toEqual([128, 2]);
    expect(onlyEntry('.entry k() .reqntid 256 { ret; }').requiredThreads).toEqual([256]);
    expect(onlyEntry('.entry k() .maxntid 32 { ret; }')).toMatchObject({ maxThreads: [32] });
  });
});

describe('register declarations', () => {
  it('reads ranges, single names and name lists', () => {
    const entry = onlyEntry(
      '.entry k()\n{\n.reg .b32 %r<49>;\n.reg .f32 %a, %b;\n.reg .pred %x;\n.reg .f16x2 %h<3>, %g;\nret;\n}\n',
    );
    expect(entry.registers).toEqual([
      { type: 'b32', name: '%r', count: 49, location: { line: 6, text: '.reg .b32 %r<49>;' } },
      { type: 'f32', name: '%a', location: { line: 7, text: '.reg .f32 %a, %b;' } },
      { type: 'f32', name: '%b', location: { line: 7, text: '.reg .f32 %a, %b;' } },
      { type: 'pred', name: '%x', location: { line: 8, text: '.reg .pred %x;' } },
      {
        type: 'f16x2',
        name: '%h',
        count: 3,
        location: { line: 9, text: '.reg .f16x2 %h<3>, %g;' },
      },
      { type: 'f16x2', name: '%g', location: { line: 9, text: '.reg .f16x2 %h<3>, %g;' } },
    ]);
  });

  it('resolves registers declared without % (inline asm from cuda_fp16.h)', () => {
    const entry = onlyEntry(
      [
        '.entry k() {',
        '.reg .b32 %r<3>;',
        '.reg .pred p;',
        '{ .reg .f16 low, high; mov.b32 {low, high}, %r1; mov.b32 %r2, {high, low}; }',
        '{ .reg .f16 low, high; mov.b32 {low, _}, %r2; }',
        '{ .reg .b32 q<2>; mov.b32 q1, 0; @p add.u32 %r1, q1, q1; }',
        'ret;',
        '}',
      ].join('\n'),
    );
    expect(entry.registers.map((register) => register.name)).toEqual([
      '%r',
      'p',
      'low',
      'high',
      'q',
    ]);
    const operands = entry.body.flatMap((statement) =>
      statement.kind === 'instruction' ? statement.operands : [],
    );
    expect(operands).toContainEqual({
      kind: 'vector',
      elements: [
        { kind: 'register', name: 'low' },
        { kind: 'register', name: 'high' },
      ],
    });
    expect(operands).toContainEqual({ kind: 'register', name: 'q1' });
    expect(operands).not.toContainEqual({ kind: 'symbol', name: 'q1' });
    expect(
      entry.body.find((statement) => statement.kind === 'instruction' && statement.guard),
    ).toMatchObject({
      guard: { register: 'p', negated: false },
      opcode: 'add',
    });
  });
});

describe('state-space variables', () => {
  it('reads module-scope .global, .const and .shared with alignment, lengths and initializers', () => {
    const module = parsePtx(
      [
        HEADER,
        '.global .align 4 .b8 table[4] = {1, 2, 255, 0};',
        '.visible .global .u32 counter = 7;',
        '.const .f32 weights[3] = {0f3F800000, 2.5, 3};',
        '.const .f64 one = 1.0;',
        '.global .s16 negative[2] = {-1, -2};',
        '.global .u8 grid[2][3] = {{1, 2, 3}, {4, 5, 6}};',
        '.global .u32 sized[] = {9, 8};',
        '.global .u32 partial[4] = {1};',
        '.shared .align 16 .f32 tile[256];',
        '.global .u32 first, second[2];',
        '.extern .shared .align 16 .b8 dynamic_smem[];',
      ].join('\n'),
    );
    const summary = module.variables.map((variable) => [
      variable.space,
      variable.type,
      variable.name,
      variable.align,
      variable.length,
      variable.initializer,
    ]);
    expect(summary).toEqual([
      ['global', 'b8', 'table', 4, 4, [1n, 2n, 255n, 0n]],
      ['global', 'u32', 'counter', 4, undefined, [7n]],
      ['const', 'f32', 'weights', 4, 3, [0x3f800000n, 0x40200000n, 0x40400000n]],
      ['const', 'f64', 'one', 8, undefined, [0x3ff0000000000000n]],
      ['global', 's16', 'negative', 2, 2, [0xffffn, 0xfffen]],
      ['global', 'u8', 'grid', 1, 6, [1n, 2n, 3n, 4n, 5n, 6n]],
      ['global', 'u32', 'sized', 4, 2, [9n, 8n]],
      ['global', 'u32', 'partial', 4, 4, [1n]],
      ['shared', 'f32', 'tile', 16, 256, undefined],
      ['global', 'u32', 'first', 4, undefined, undefined],
      ['global', 'u32', 'second', 4, 2, undefined],
      ['shared', 'b8', 'dynamic_smem', 16, undefined, undefined],
    ]);
    expect(module.variables[1]?.location).toEqual({
      line: 6,
      text: '.visible .global .u32 counter = 7;',
    });
  });

  it('reads function-scope .shared and .local arrays with alignment', () => {
    const entry = onlyEntry(
      '.entry k()\n{\n.shared .align 4 .b8 partial[128];\n.local .align 8 .b8 __local_depot0[32];\n.shared .u32 flag;\nret;\n}\n',
    );
    expect(entry.variables).toEqual([
      { space: 'shared', type: 'b8', name: 'partial', align: 4, length: 128, location: { line: 6, text: '.shared .align 4 .b8 partial[128];' } },
      { space: 'local', type: 'b8', name: '__local_depot0', align: 8, length: 32, location: { line: 7, text: '.local .align 8 .b8 __local_depot0[32];' } },
      { space: 'shared', type: 'u32', name: 'flag', align: 4, location: { line: 8, text: '.shared .u32 flag;' } },
    ]); // prettier-ignore
  });

  it('accepts .pragma hints in a body', () => {
    const entry = onlyEntry('.entry k()\n{\n.pragma "nounroll";\nret;\n}\n');
    expect(entry.body).toHaveLength(1);
  });
});

describe('nvcc idioms', () => {
  it('reads local depots, string constants and inline-asm blocks that redeclare %temp', () => {
    const module = parsePtx(
      [
        '.version 8.0',
        '.target sm_86',
        '.address_size 64',
        '.global .align 1 .b8 $str[3] = {104, 105, 0};',
        '.visible .entry _Z1kPf(',
        '\t.param .u64 .ptr .align 1 _Z1kPf_param_0',
        ')',
        '.maxntid 256, 1, 1',
        '{',
        '\t.local .align 8 .b8 \t__local_depot0[8];',
        '\t.reg .b64 \t%SP;',
        '\t.reg .b64 \t%SPL;',
        '\t.reg .b16 \t%rs<3>;',
        '\t.reg .b32 \t%r<3>;',
        '\tmov.u64 \t%SPL, __local_depot0;',
        '\tcvta.local.u64 \t%SP, %SPL;',
        '\t// begin inline asm',
        '\t{  cvt.f32.f16 %r2, %rs1;}',
        '\t// end inline asm',
        '\t{',
        '\t.reg .b16 %temp;',
        '\tmov.b32 {%temp, %rs2}, %r1;',
        '\t}',
        '\t{',
        '\t.reg .b16 %temp;',
        '\tmov.b32 {%rs1, %temp}, %r1;',
        '\t}',
        '\tret;',
        '}',
      ].join('\n'),
    );
    expect(module.variables).toMatchObject([
      { name: '$str', length: 3, initializer: [104n, 105n, 0n] },
    ]);
    const entry = module.entries[0];
    expect(entry?.maxThreads).toEqual([256, 1, 1]);
    expect(entry?.variables).toMatchObject([{ space: 'local', name: '__local_depot0', align: 8 }]);
    expect(entry?.registers.map((register) => register.name)).toEqual([
      '%SP',
      '%SPL',
      '%rs',
      '%r',
      '%temp',
    ]);
    expect(entry?.body.map((statement) => statement.location.line)).toEqual([
      15, 16, 18, 22, 26, 28,
    ]);
  });
});
