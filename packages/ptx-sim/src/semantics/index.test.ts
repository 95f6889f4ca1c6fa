import { describe, expect, it } from 'vitest';
import { decodeAlu } from './index.js';

describe('decodeAlu', () => {
  it('returns undefined for opcodes that are not ALU operations', () => {
    for (const opcode of [
      'ld',
      'st',
      'bra',
      'bar',
      'shfl',
      'mma',
      'ldmatrix',
      'atom',
      'ret',
      'frobnicate',
    ]) {
      expect(decodeAlu(opcode, ['b32'], 2)).toBeUndefined();
    }
  });

  it('throws naming what is unsupported for known opcodes', () => {
    expect(() => decodeAlu('add', ['cc', 'u32'], 3)).toThrow(/unsupported add\.cc\.u32/);
    expect(() => decodeAlu('add', ['u8'], 3)).toThrow(/\.u8/);
    expect(() => decodeAlu('cvt', ['rna', 'tf32', 'f32'], 2)).toThrow(/unsupported cvt/);
    expect(() => decodeAlu('mov', ['b128'], 2)).toThrow(/b128/);
    expect(() => decodeAlu('setp', ['lt', 'f32'], 3)).not.toThrow();
    expect(() => decodeAlu('prmt', ['b32', 'f4e', 'b4e'], 4)).toThrow(/mode/);
  });

  it('dispatches on the operand type and names the family', () => {
    expect(decodeAlu('add', ['s32'], 3)?.sourceTypes).toEqual(['s32', 's32']);
    expect(decodeAlu('add', ['f32'], 3)?.sourceTypes).toEqual(['f32', 'f32']);
    expect(decodeAlu('add', ['f16x2'], 3)?.sourceTypes).toEqual(['f16x2', 'f16x2']);
    expect(decodeAlu('mul', ['wide', 'u32'], 3)?.destinationTypes).toEqual(['u64']);
    expect(decodeAlu('mad', ['lo', 's32'], 4)?.family).toBe('mad');
    expect(decodeAlu('mad', ['rn', 'f32'], 4)?.family).toBe('mad');
    expect(decodeAlu('setp', ['ge', 'u32'], 3)?.destinationTypes).toEqual(['pred']);
    expect(decodeAlu('shl', ['b32'], 3)?.sourceTypes).toEqual(['b32', 'u32']);
    expect(decodeAlu('cvt', ['rn', 'f32', 'u32'], 2)?.sourceTypes).toEqual(['u32']);
    expect(decodeAlu('popc', ['b64'], 2)?.destinationTypes).toEqual(['u32']);
    expect(decodeAlu('dp4a', ['s32', 'u32'], 4)?.sourceTypes).toEqual(['s32', 'u32', 's32']);
  });
});
