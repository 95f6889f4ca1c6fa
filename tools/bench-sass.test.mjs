// tools/bench-sass.mjs's SASS analysis on recorded nvdisasm output of known-answer CUDA kernels
// (fixtures/sass: what nvcc 13.0 and nvdisasm 12.5 made of known.cu), so no NVIDIA tool is needed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyzeFunction, decodeControl, parseDisassembly } from './bench-sass.mjs';

const fixture = (name) =>
  readFileSync(new URL(`../fixtures/sass/${name}`, import.meta.url), 'utf8');

describe('decodeControl', () => {
  it('reads an LDG that sets scoreboard 2 and an instruction that waits on it', () => {
    // gather's LDG.E.CONSTANT and the IMAD.WIDE that uses its result (sm_80).
    expect(decodeControl(0x000ea2000c1e9900n)).toEqual({
      stall: 1,
      yield: 1,
      writeBarrier: 2,
      readBarrier: 7,
      waitMask: 0,
      reuse: 0,
    });
    expect(decodeControl(0x004fcc00078e020bn)).toMatchObject({
      stall: 6,
      yield: 0,
      writeBarrier: 7,
      readBarrier: 7,
      waitMask: 0b000100,
    });
  });
});

const EXPECTED = {
  one_load: { loads: 1, loadBytes: 4, waits: 1, rounds: 1 },
  four_loads: { loads: 4, loadBytes: 16, waits: 3, rounds: 1 },
  four_vec: { loads: 1, loadBytes: 16, waits: 1, rounds: 1 },
  gather: { loads: 2, loadBytes: 8, waits: 2, rounds: 2 },
  pipelined: { loads: 1, loadBytes: 4, waits: 1, rounds: 1 },
  no_loads: { loads: 0, loadBytes: 0, waits: 0, rounds: 0 },
};

describe.each(['sm_80', 'sm_90'])('known-answer kernels on %s', (arch) => {
  const functions = parseDisassembly(fixture(`known.${arch}.sass`));

  it('parses every kernel, padding dropped, every instruction with its control bits', () => {
    expect(functions.map((fn) => fn.name).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const fn of functions) {
      expect(fn.instructions.at(-1).opcode).toBe('EXIT');
      expect(fn.instructions.every((instruction) => instruction.control !== undefined)).toBe(true);
    }
  });

  it.each(Object.entries(EXPECTED))('%s: its loop, LDGs, waits and rounds', (name, expected) => {
    const figures = analyzeFunction(functions.find((fn) => fn.name === name));
    expect(figures.loop).toBeDefined();
    expect(figures).toMatchObject(expected);
  });
});
