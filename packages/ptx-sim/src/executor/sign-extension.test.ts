import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { simulate } from './simulate.js';

// ptxas accepts it (packages/ptx checks every fixture): signed results into wider registers.
const source = readFileSync(
  new URL('../fixtures/sign-extension.sm_80.ptx', import.meta.url),
  'utf8',
);

describe('signed results narrower than their register', () => {
  it('are sign-extended to the register, unsigned ones zero-extended (ISA: wider destinations)', () => {
    const src = new Uint8Array(new Uint32Array([0xfe3480fd]).buffer);
    const out = new Uint8Array(32);
    const result = simulate(parsePtx(source), {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { src: { kind: 'buffer', bytes: src }, out: { kind: 'buffer', bytes: out } },
    });
    expect(result.findings).toEqual([]);
    const view = new DataView(out.buffer);
    expect(view.getInt32(0, true)).toBe(-3); // cvt.s8.s32 %r: 0xfd as s8, in 32 bits
    expect(view.getInt32(4, true)).toBe(-32515); // cvt.s16.s32 %r: 0x80fd as s16
    expect(view.getBigInt64(8, true)).toBe(-3n); // ld.global.s8 into a 64-bit register
    expect(view.getBigInt64(16, true)).toBe(BigInt(0xfe3480fd | 0)); // ld.global.s32 into 64 bits
    expect(view.getUint32(24, true)).toBe(0xfd); // cvt.u8.u32 %r: zero-extended
  });
});
