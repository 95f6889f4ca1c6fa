import { describe, expect, it } from 'vitest';
import { SimulationInputError } from '../errors.js';
import { parsePtx } from '../parser/index.js';
import { StepLimitError } from './cta.js';
import { simulate } from './simulate.js';

const SPIN = parsePtx(
  [
    '.version 7.0',
    '.target sm_80',
    '.address_size 64',
    '.visible .entry spin(.param .u32 n, .param .s32 m, .param .u64 constructor)',
    '{',
    '\t.reg .b32 %r<3>;',
    '\tmov.u32 %r1, 0;',
    '$L_loop:',
    '\tadd.s32 %r1, %r1, 1;',
    '\tbra.uni $L_loop;',
    '\tret;',
    '}',
    '',
  ].join('\n'),
);

const ARGS = {
  n: { kind: 'scalar', value: 1 },
  m: { kind: 'scalar', value: -1 },
  constructor: { kind: 'scalar', value: 0n },
} as const;

describe('the step budget', () => {
  it('stops an endless loop with a StepLimitError naming the budget and the line', () => {
    const run = () =>
      simulate(SPIN, {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: ARGS,
        maxThreadInstructions: 1000,
      });
    expect(run).toThrow(StepLimitError);
    try {
      run();
    } catch (error) {
      expect(error).toMatchObject({ limit: 1000, line: 9 });
      expect((error as Error).message).toBe(
        'more than 1000 thread instructions executed (last at line 9); an endless loop?',
      );
    }
  });

  it('must be a positive integer', () => {
    for (const maxThreadInstructions of [0, -1, 1.5, Number.NaN])
      expect(() =>
        simulate(SPIN, { grid: [1, 1, 1], block: [1, 1, 1], args: ARGS, maxThreadInstructions }),
      ).toThrow(/maxThreadInstructions must be a positive integer/);
  });
});

describe('scalar arguments', () => {
  const run = (args: Record<string, { kind: 'scalar'; value: number | bigint }>) => () =>
    simulate(SPIN, {
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { ...ARGS, ...args },
      maxThreadInstructions: 10,
    });

  it('must fit the parameter, read as signed or unsigned', () => {
    for (const value of [
      2 ** 32,
      -(2 ** 31) - 1,
      4294967296n,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ])
      expect(run({ n: { kind: 'scalar', value } })).toThrow(SimulationInputError);
    expect(run({ n: { kind: 'scalar', value: 2 ** 32 } })).toThrow(
      "parameter 'n' is .u32; 4294967296 does not fit in 32 bits",
    );
    // In range, both readings reach the kernel (and then the budget).
    for (const value of [2 ** 32 - 1, -(2 ** 31), 0n])
      expect(run({ n: { kind: 'scalar', value } })).toThrow(StepLimitError);
  });

  it('are looked up as own properties: a parameter named constructor is missing, not Object', () => {
    const { constructor: _dropped, ...rest } = ARGS;
    expect(() =>
      simulate(SPIN, { grid: [1, 1, 1], block: [1, 1, 1], args: rest, maxThreadInstructions: 10 }),
    ).toThrow("missing argument for parameter 'constructor'");
  });
});
