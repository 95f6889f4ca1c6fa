import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { lanesOf } from './lane-lists.js';
import { simulate } from './simulate.js';

// Odd lanes jump over two adds; even lanes run them, then both groups meet at $L_join.
const DIVERGE = parsePtx(
  [
    '.version 7.0',
    '.target sm_80',
    '.address_size 64',
    '.visible .entry diverge(.param .u64 out)',
    '{',
    '\t.reg .pred %p<2>;',
    '\t.reg .b32 %r<5>;',
    '\t.reg .b64 %rd<4>;',
    '\tld.param.u64 %rd1, [out];',
    '\tmov.u32 %r1, %laneid;',
    '\tand.b32 %r2, %r1, 1;',
    '\tsetp.eq.u32 %p1, %r2, 1;',
    '\tmov.u32 %r3, 0;',
    '\t@%p1 bra $L_join;',
    '\tadd.u32 %r3, %r3, 10;',
    '\tadd.u32 %r3, %r3, 20;',
    '$L_join:',
    '\tadd.u32 %r3, %r3, %r1;',
    '\tshfl.sync.bfly.b32 %r4, %r3, 1, 31, 0xffffffff;',
    '\tmul.wide.u32 %rd2, %r1, 4;',
    '\tadd.s64 %rd3, %rd1, %rd2;',
    '\tst.global.u32 [%rd3], %r4;',
    '\tret;',
    '}',
    '',
  ].join('\n'),
);

describe('the warp scheduler', () => {
  it('runs a diverged lane group on alone only until the other group is due, then reconverges', () => {
    const out = new Uint8Array(32 * 4);
    const result = simulate(DIVERGE, {
      grid: [1, 1, 1],
      block: [32, 1, 1],
      args: { out: { kind: 'buffer', bytes: out } },
    });
    expect(result.findings).toEqual([]);
    const words = new Uint32Array(out.buffer);
    // Lane L holds L (+30 when even); the butterfly gives each lane its neighbour's value.
    for (let lane = 0; lane < 32; lane++)
      expect(words[lane]).toBe(lane % 2 === 0 ? lane + 1 : lane - 1 + 30);
    // The add at $L_join issues once for all 32 lanes: two adds for the even lanes, one there,
    // and the address add.
    expect(result.counters.warpInstructions).toEqual({
      ld: 1,
      mov: 2,
      and: 1,
      setp: 1,
      bra: 1,
      add: 4,
      shfl: 1,
      mul: 1,
      st: 1,
      ret: 1,
    });
    expect(result.counters.threadInstructions).toBe(11 * 32 + 16 + 2 * 16);
  });
});

describe('lanesOf', () => {
  it('lists the lanes of a mask in order and hands the same list back', () => {
    expect(lanesOf(0b1011)).toEqual([0, 1, 3]);
    expect(lanesOf(0)).toEqual([]);
    expect(lanesOf(-1)).toEqual(Array.from({ length: 32 }, (_, lane) => lane));
    expect(lanesOf(1 << 31)).toEqual([31]);
    expect(lanesOf(0b1011)).toBe(lanesOf(0b1011));
  });
});
