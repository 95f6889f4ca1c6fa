import { describe, expect, it } from 'vitest';
import type { Instruction, Operand } from '../ast.js';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from './index.js';

const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n';

function parseOne(source: string): Instruction {
  const entry = parsePtx(`${HEADER}${source}\n}\n`).entries[0];
  const statement = entry?.body[0];
  if (statement?.kind !== 'instruction') throw new Error('no instruction');
  return statement;
}

function operandsOf(source: string): readonly Operand[] {
  return parseOne(source).operands;
}

function lastOperand(operand: string): Operand | undefined {
  return operandsOf(`mov.u32 %r1, ${operand};`)[1];
}

const reg = (name: string) => ({ kind: 'register', name }) as const;
const int = (value: bigint) => ({ kind: 'integer', value }) as const;
const sym = (name: string) => ({ kind: 'symbol', name }) as const;

describe('register operands', () => {
  it.each(['%r1', '%f12', '%rd3', '%p2', '%x', '%temp_1', '%r$2'])('reads %s', (name) => {
    expect(lastOperand(name)).toEqual(reg(name));
  });

  it.each([
    '%tid.x',
    '%tid.y',
    '%ntid.y',
    '%ctaid.z',
    '%nctaid.x',
    '%laneid',
    '%warpid',
    '%lanemask_lt',
    '%clock',
    '%clock64',
  ])('keeps the component in special register %s', (name) => {
    expect(lastOperand(name)).toEqual(reg(name));
  });
});

describe('integer immediates', () => {
  it.each([
    ['0', 0n],
    ['42', 42n],
    ['-1', -1n],
    ['- 7', -7n],
    ['0x1F', 31n],
    ['0X1f', 31n],
    ['0xffffffff', 0xffffffffn],
    ['0xFFFFFFFFFFFFFFFF', 0xffffffffffffffffn],
    ['017', 15n],
    ['0b101', 5n],
    ['0B11', 3n],
    ['42U', 42n],
    ['0x10U', 16n],
    ['-2147483648', -2147483648n],
  ])('reads %s', (text, value) => {
    expect(lastOperand(text)).toEqual(int(value));
  });
});

describe('float immediates', () => {
  it('reads 0f as f32 bits and 0d as f64 bits', () => {
    expect(lastOperand('0f3F800000')).toEqual({ kind: 'float', bits: 0x3f800000n, width: 32 });
    expect(lastOperand('0F7FC00000')).toEqual({ kind: 'float', bits: 0x7fc00000n, width: 32 });
    expect(lastOperand('0d3FF0000000000000')).toEqual({
      kind: 'float',
      bits: 0x3ff0000000000000n,
      width: 64,
    });
  });

  it.each([
    ['1.5', 0x3ff8000000000000n],
    ['1e-3', 0x3f50624dd2f1a9fcn],
    ['2.5E+2', 0x406f400000000000n],
    ['-0.5', 0xbfe0000000000000n],
  ])('stores decimal float %s as f64 bits', (text, bits) => {
    expect(lastOperand(text)).toEqual({ kind: 'float', bits, width: 64 });
  });

  it('negates bit-pattern floats by their sign bit', () => {
    expect(lastOperand('-0f3F800000')).toEqual({ kind: 'float', bits: 0xbf800000n, width: 32 });
  });
});

describe('addresses', () => {
  it.each([
    ['[%rd1]', { kind: 'address', base: reg('%rd1'), offset: 0n }],
    ['[%rd1+16]', { kind: 'address', base: reg('%rd1'), offset: 16n }],
    ['[%rd1 + 16]', { kind: 'address', base: reg('%rd1'), offset: 16n }],
    ['[%rd1+-4]', { kind: 'address', base: reg('%rd1'), offset: -4n }],
    ['[%r2-8]', { kind: 'address', base: reg('%r2'), offset: -8n }],
    ['[%rd1+0x10]', { kind: 'address', base: reg('%rd1'), offset: 16n }],
    ['[sym]', { kind: 'address', base: sym('sym'), offset: 0n }],
    ['[sym+8]', { kind: 'address', base: sym('sym'), offset: 8n }],
    ['[1024]', { kind: 'address', offset: 1024n }],
  ])('reads %s', (text, expected) => {
    expect(operandsOf(`ld.global.u32 %r1, ${text};`)[1]).toEqual(expected);
  });

  it('reads the address as the first operand of a store', () => {
    expect(operandsOf('st.shared.v2.f32 [%r3+8], {%f1, %f2};')).toEqual([
      { kind: 'address', base: reg('%r3'), offset: 8n },
      { kind: 'vector', elements: [reg('%f1'), reg('%f2')] },
    ]);
  });
});

describe('vectors, sinks, symbols and pairs', () => {
  it('reads four-element vectors with commas inside the braces', () => {
    expect(operandsOf('ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];')).toEqual([
      { kind: 'vector', elements: [reg('%f1'), reg('%f2'), reg('%f3'), reg('%f4')] },
      { kind: 'address', base: reg('%rd1'), offset: 0n },
    ]);
  });

  it('reads immediates inside vectors, as nvcc writes {0, %rs1}', () => {
    expect(operandsOf('mov.b32 %r1, {0, %rs1};')[1]).toEqual({
      kind: 'vector',
      elements: [int(0n), reg('%rs1')],
    });
    expect(operandsOf('mov.b64 %rd1, {%r1, -3};')[1]).toEqual({
      kind: 'vector',
      elements: [reg('%r1'), int(-3n)],
    });
  });

  it('reads _ sinks inside vectors and as operands', () => {
    expect(operandsOf('ld.global.v4.u32 {%r1, _, %r3, _}, [%rd2];')[0]).toEqual({
      kind: 'vector',
      elements: [reg('%r1'), { kind: 'sink' }, reg('%r3'), { kind: 'sink' }],
    });
    expect(operandsOf('atom.global.add.u32 _, [%rd1], 1;')[0]).toEqual({ kind: 'sink' });
  });

  it('reads labels and variable names as symbols', () => {
    expect(operandsOf('bra.uni $L__BB0_2;')).toEqual([sym('$L__BB0_2')]);
    expect(operandsOf('bra LBB0_1;')).toEqual([sym('LBB0_1')]);
    expect(lastOperand('shared_x')).toEqual(sym('shared_x'));
  });

  it('reads r|p pairs', () => {
    expect(operandsOf('shfl.sync.idx.b32 %r10|%p2, %r6, 0, 31, 0xffffffff;')).toEqual([
      { kind: 'pair', first: reg('%r10'), second: reg('%p2') },
      reg('%r6'),
      int(0n),
      int(31n),
      int(0xffffffffn),
    ]);
    expect(operandsOf('setp.lt.and.f32 %p1|%p2, %f1, %f2, %p3;')[0]).toEqual({
      kind: 'pair',
      first: reg('%p1'),
      second: reg('%p2'),
    });
  });

  it('reads mma fragments', () => {
    const mma = parseOne(
      'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};',
    );
    expect(mma.opcode).toBe('mma');
    expect(mma.modifiers).toEqual([
      'sync',
      'aligned',
      'm16n8k16',
      'row',
      'col',
      'f32',
      'f16',
      'f16',
      'f32',
    ]);
    expect(
      mma.operands.map((operand) => (operand.kind === 'vector' ? operand.elements.length : 0)),
    ).toEqual([4, 4, 2, 4]);
  });
});

describe('bad operands', () => {
  it.each([
    ['mov.u32 %r1, 0xZZ;', /bad number literal '0xZZ'/],
    ['mov.u32 %r1, 09;', /bad number literal '09'/],
    ['mov.u32 %r1, 0b102;', /bad number literal/],
    ['mov.f32 %f1, 0f3F80;', /bad number literal '0f3F80'/],
    ['mov.u32 %r1, #3;', /unexpected character '#'/],
    ['mov.u32 %r1, ;', /expected an operand/],
    ['mov.u32 %r1 %r2;', /expected ';'/],
    ['ld.u32 %r1, [%rd1+%r2];', /expected a number/],
    ['ld.u32 %r1, [%rd1+1.5];', /address offset must be an integer/],
    ['ld.u32 %r1, [];', /expected a register, symbol or integer in address/],
    ['mov.b64 %rd1, {};', /expected a register, immediate or _ in vector/],
    ['mov.b64 %rd1, {%r1, [%rd2]};', /expected a register, immediate or _ in vector/],
    ['mov.b64 %rd1, {%r1, undeclared};', /vector element 'undeclared' is not a register/],
    ['setp.eq.and.u32 %p1, %r1, %r2, !%p2;', /negated predicate operands/],
  ])('rejects %s on its line', (source, message) => {
    const error = captureError(source);
    expect(error.line).toBe(6);
    expect(error.text).toBe(source);
    expect(error.reason).toMatch(message);
  });
});

function captureError(source: string): PtxSyntaxError {
  try {
    parseOne(source);
  } catch (error) {
    if (error instanceof PtxSyntaxError) return error;
    throw error;
  }
  throw new Error(`no error for ${source}`);
}
