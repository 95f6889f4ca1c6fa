import { describe, expect, it } from 'vitest';
import { decodeAlu } from './index.js';

describe('mov', () => {
  it('copies same-width values of any type', () => {
    for (const [type, value] of [
      ['b32', 0xdeadbeef],
      ['u32', 7],
      ['f32', 0x3f800000],
      ['pred', 1],
      ['b16', 0xffff],
    ] as const) {
      const op = decodeAlu('mov', [type], 2);
      expect(op?.sourceTypes).toEqual([type]);
      expect(op?.evaluate([value])).toEqual([value]);
    }
    expect(decodeAlu('mov', ['b64'], 2)?.evaluate([0x123456789abcdefn])).toEqual([
      0x123456789abcdefn,
    ]);
  });

  it('packs vector sources, element 0 in the low bits', () => {
    const halves = decodeAlu('mov', ['b32'], 2, [1, 2]);
    expect(halves?.sourceTypes).toEqual(['b16', 'b16']);
    expect(halves?.destinationTypes).toEqual(['b32']);
    expect(halves?.evaluate([0x3c00, 0xc000])).toEqual([0xc0003c00]);
    const words = decodeAlu('mov', ['b64'], 2, [1, 2]);
    expect(words?.sourceTypes).toEqual(['b32', 'b32']);
    expect(words?.evaluate([0x89abcdef, 0x01234567])).toEqual([0x0123456789abcdefn]);
    const bytes = decodeAlu('mov', ['b32'], 2, [1, 4]);
    expect(bytes?.sourceTypes).toEqual(['b8', 'b8', 'b8', 'b8']);
    expect(bytes?.evaluate([0x11, 0x22, 0x33, 0x44])).toEqual([0x44332211]);
    expect(decodeAlu('mov', ['b64'], 2, [1, 4])?.evaluate([1, 2, 3, 4])).toEqual([
      0x0004000300020001n,
    ]);
  });

  it('unpacks into vector destinations', () => {
    const halves = decodeAlu('mov', ['b32'], 2, [2, 1]);
    expect(halves?.destinationTypes).toEqual(['b16', 'b16']);
    expect(halves?.sourceTypes).toEqual(['b32']);
    expect(halves?.evaluate([0xc0003c00])).toEqual([0x3c00, 0xc000]);
    expect(decodeAlu('mov', ['b64'], 2, [2, 1])?.evaluate([0x0123456789abcdefn])).toEqual([
      0x89abcdef, 0x01234567,
    ]);
    expect(decodeAlu('mov', ['b16'], 2, [2, 1])?.evaluate([0xbeef])).toEqual([0xef, 0xbe]);
  });

  it('rejects vector forms that do not fit', () => {
    expect(() => decodeAlu('mov', ['u32'], 2, [1, 2])).toThrow(/vector/);
    expect(() => decodeAlu('mov', ['b32'], 2, [1, 3])).toThrow(/vector/);
    expect(() => decodeAlu('mov', ['b32'], 2, [2, 2])).toThrow(/vector/);
  });
});

describe('cvta', () => {
  it('is the identity on addresses', () => {
    expect(decodeAlu('cvta', ['to', 'global', 'u64'], 2)?.evaluate([0x7000n])).toEqual([0x7000n]);
    expect(decodeAlu('cvta', ['shared', 'u32'], 2)?.evaluate([16])).toEqual([16]);
    expect(() => decodeAlu('cvta', ['to', 'u64'], 2)).toThrow(/state space/);
  });
});
