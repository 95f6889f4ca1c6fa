// Issue #26 rows 8-11: hostile PTX text meets a named limit (one message), never a crash.
import { describe, expect, it } from 'vitest';
import { PtxLimitError, PtxSyntaxError, SimulationInputError } from './errors.js';
import { StepLimitError } from './executor/cta.js';
import { simulate, type SimulateOptions } from './executor/simulate.js';
import { SIMULATOR_LIMITS, type SimulatorLimit } from './limits.js';
import { parsePtx } from './parser/index.js';

const HEADER = '.version 8.0\n.target sm_90\n.address_size 64\n';
const entry = (body: string, params = ''): string =>
  `${HEADER}.visible .entry k(${params})\n{\n${body}\nret;\n}\n`;
const LAUNCH: SimulateOptions = { grid: [1, 1, 1], block: [32, 1, 1], args: {} };

function limitError(run: () => unknown): PtxLimitError {
  try {
    run();
  } catch (error) {
    if (error instanceof PtxLimitError) return error;
    throw error;
  }
  throw new Error('expected a PtxLimitError');
}

function expectLimit(run: () => unknown, limit: SimulatorLimit, line: number): PtxLimitError {
  const error = limitError(run);
  expect(error.limit).toBe(limit);
  expect(error.line).toBe(line);
  expect(error.message).toContain(`(SIMULATOR_LIMITS.${limit})`);
  expect(error.message).not.toContain('\n');
  return error;
}

describe('row 8: nested blocks', () => {
  const nested = (depth: number): string =>
    entry(`${'{'.repeat(depth)}\nadd.u32 %r1, %r1, 1;\n${'}'.repeat(depth)}`).replace(
      '{\n',
      '{\n.reg .b32 %r<2>;\n',
    );

  it('takes as many levels as ptxas 13.0 (1663) and refuses the next, at its line', () => {
    const module = parsePtx(nested(SIMULATOR_LIMITS.blockDepth));
    expect(module.entries[0]?.body.map((statement) => statement.kind)).toEqual([
      'instruction',
      'instruction',
    ]);
    const error = expectLimit(
      () => parsePtx(nested(SIMULATOR_LIMITS.blockDepth + 1)),
      'blockDepth',
      7,
    );
    expect(error.reason).toBe(
      "'{' nested 1664 deep in an entry is over the limit of 1663 (SIMULATOR_LIMITS.blockDepth)",
    );
  });

  it('refuses 100,000 levels without recursion, lazily parsed or not', () => {
    expectLimit(() => parsePtx(nested(100_000)), 'blockDepth', 7);
    expectLimit(() => parsePtx(nested(100_000), { lazyEntries: true }), 'blockDepth', 7);
  });

  it('bounds an initializer the same way', () => {
    const initializer = (depth: number): string =>
      `${HEADER}.global .u32 g[1] = ${'{'.repeat(depth)}1${'}'.repeat(depth)};\n`;
    expect(parsePtx(initializer(SIMULATOR_LIMITS.blockDepth)).variables[0]?.initializer).toEqual([
      1n,
    ]);
    expectLimit(() => parsePtx(initializer(100_000)), 'blockDepth', 4);
  });
});

describe('row 9: register declarations', () => {
  it('declares two billion registers for free: only the ones used get a slot', () => {
    const module = parsePtx(
      entry('.reg .b32 %r<2000000000>;\nmov.u32 %r1999999999, 7;\nadd.u32 %r5, %r1999999999, 1;'),
    );
    const started = performance.now();
    expect(simulate(module, LAUNCH).findings).toEqual([]);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses a count ptxas overflows on (2^32), naming the limit', () => {
    const error = expectLimit(
      () => parsePtx(entry('.reg .b32 %r<4294967296>;')),
      'registersPerDeclaration',
      6,
    );
    expect(error.reason).toBe(
      "%r<4294967296> is over the limit of 4294967295 registers (SIMULATOR_LIMITS.registersPerDeclaration), as ptxas's",
    );
  });

  it('refuses a block whose register file would pass registerValuesPerBlock', () => {
    // 16385 registers × 32 lanes × 32 warps is just over 2^24 values; one warp holds them.
    const count = SIMULATOR_LIMITS.registerValuesPerBlock / 1024 + 1;
    const moves = Array.from({ length: count }, (_, index) => `mov.u32 %r${index}, 0;`);
    const module = parsePtx(entry(`.reg .b32 %r<${count}>;\n${moves.join('\n')}`));
    expect(() => simulate(module, { ...LAUNCH, block: [1024, 1, 1] })).toThrow(
      new SimulationInputError(
        'entry k uses 16385 registers; a block of 32 warp(s) holds 16778240 register values, over the limit of 16777216 (SIMULATOR_LIMITS.registerValuesPerBlock): launch fewer threads a block',
      ),
    );
    expect(simulate(module, LAUNCH).findings).toEqual([]);
  });
});

describe('row 10: state-space sizes', () => {
  it.each<[string, string, SimulatorLimit]>([
    ['2 GiB of .shared', '.shared .b8 s[2147483648];', 'staticSharedBytes'],
    ['4 GiB of .shared', '.shared .b8 s[4294967295];', 'staticSharedBytes'],
    ['2^40 bytes of .shared', '.shared .b8 s[1099511627776];', 'staticSharedBytes'],
    ['48 KiB + 1 of .shared', '.shared .b8 s[49153];', 'staticSharedBytes'],
    ['64 MiB of .local', '.local .b8 l[67108864];', 'localBytesPerThread'],
    ['512 KiB + 1 of .local', '.local .b8 l[524289];', 'localBytesPerThread'],
    ['2^40 bytes of .local', '.local .b8 l[1099511627776];', 'localBytesPerThread'],
  ])('%s: refused at its line when launched', (_, declaration, limit) => {
    const module = parsePtx(entry(declaration));
    expectLimit(() => simulate(module, LAUNCH), limit, 6);
  });

  it('takes the limits themselves: 48 KiB static shared, 512 KiB of local a thread', () => {
    const module = parsePtx(
      entry(
        '.shared .b8 s[49152];\n.local .b8 l[524288];\n.reg .b32 %r<3>;\nst.local.u32 [l+524284], 1;\nld.local.u32 %r1, [l+524284];\nmov.u32 %r2, %tid.x;\nshl.b32 %r2, %r2, 2;\nst.shared.u32 s[%r2+48896], %r1;',
      ),
    );
    expect(simulate(module, { ...LAUNCH, grid: [2, 1, 1], block: [64, 1, 1] }).findings).toEqual(
      [],
    );
  });

  it("counts the module's .shared variables an entry uses, as ptxas does", () => {
    const module = `${HEADER}.shared .b8 big[65536];\n.shared .b8 small[16];\n`;
    const uses = (name: string): string =>
      `${module}.visible .entry k()\n{\n.reg .b32 %r<2>;\nld.shared.u32 %r1, [${name}];\nret;\n}\n`;
    expect(simulate(parsePtx(uses('small')), LAUNCH).findings).toEqual([]);
    expectLimit(() => simulate(parsePtx(uses('big')), LAUNCH), 'staticSharedBytes', 4);
  });

  it('bounds static plus dynamic shared memory by sm_90 (227 KiB)', () => {
    const module = parsePtx(entry('.shared .b8 s[1024];'));
    expect(() =>
      simulate(module, { ...LAUNCH, dynamicSharedBytes: SIMULATOR_LIMITS.sharedBytesPerBlock }),
    ).toThrow(
      /1024 bytes of static shared memory; with 232448 dynamic bytes that is over the limit of 232448 bytes \(SIMULATOR_LIMITS.sharedBytesPerBlock\)/,
    );
  });

  it('bounds the number of .global and .const variables (2^14: each has a 4 GiB address slot)', () => {
    const globals = (count: number): string =>
      `${HEADER}${Array.from({ length: count }, (_, n) => `.global .b8 g${n};`).join('\n')}\n`;
    expect(parsePtx(globals(SIMULATOR_LIMITS.globalVariables)).variables).toHaveLength(2 ** 14);
    expectLimit(
      () => parsePtx(globals(SIMULATOR_LIMITS.globalVariables + 1)),
      'globalVariables',
      4 + 2 ** 14,
    );
  });

  it('bounds parameters (32764 bytes), .const (64 KiB) and .global variables (1 GiB)', () => {
    expectLimit(
      () => simulate(parsePtx(entry('', '.param .b8 p[32765]')), LAUNCH),
      'paramBytes',
      4,
    );
    expectLimit(() => parsePtx(`${HEADER}.const .b8 c[65537];\n`), 'constBytes', 4);
    expectLimit(
      () => parsePtx(`${HEADER}.const .b8 a[65536];\n.const .b8 b[1];\n`),
      'constBytes',
      5,
    );
    expectLimit(
      () => parsePtx(`${HEADER}.global .b8 g[1099511627776];\n`),
      'globalVariableBytes',
      4,
    );
  });

  it('refuses an array length past 2^53 instead of rounding it', () => {
    expect(() => parsePtx(entry('.shared .b8 s[4294967296][4294967296];'))).toThrow(
      /line 6: array of 18446744073709552000 elements is too large/,
    );
  });
});

describe('row 11: module size and statements', () => {
  it('refuses a module over 64 MiB before reading it, as one line', () => {
    const text = `${HEADER}//${' '.repeat(SIMULATOR_LIMITS.moduleChars)}\n`;
    const error = expectLimit(() => parsePtx(text), 'moduleChars', 0);
    expect(error.message).toBe(
      `the module has ${text.length} characters, over the limit of 67108864 characters (SIMULATOR_LIMITS.moduleChars)`,
    );
  });

  it('refuses an entry of more instructions than the limit, even lazily', () => {
    const rets = (count: number): string => new Array<string>(count).fill('ret;').join('\n');
    expect(parsePtx(entry(rets(SIMULATOR_LIMITS.entryInstructions - 1))).entries).toHaveLength(1);
    const error = expectLimit(
      () => parsePtx(entry(rets(SIMULATOR_LIMITS.entryInstructions)), { lazyEntries: true }),
      'entryInstructions',
      6 + 2 ** 18,
    );
    expect(error.reason).toBe(
      'an entry of more than 262144 instructions is over the limit of 262144 (SIMULATOR_LIMITS.entryInstructions)',
    );
  });

  it('refuses a module of more statements than the limit', () => {
    // Four entries of 2^18 instructions: with the entries themselves, statement 2^20 + 1 is the
    // last entry's `ret` number 2^18 - 3, on line 4 + 3 * (2^18 + 3) + 1 + (2^18 - 3).
    const body = new Array<string>(SIMULATOR_LIMITS.entryInstructions).fill('ret;').join('\n');
    const entries = [0, 1, 2, 3].map((n) => `.entry e${n}()\n{\n${body}\n}`);
    const text = `${HEADER}${entries.join('\n')}\n`;
    expectLimit(() => parsePtx(text), 'statements', 2 ** 20 + 11);
    // Declarations count too: after three such entries, variable 2^18 - 2 is statement 2^20 + 1.
    const variables = Array.from({ length: 2 ** 18 }, (_, n) => `.shared .b8 v${n};`).join('\n');
    const declared = `${HEADER}${entries.slice(0, 3).join('\n')}\n${variables}\n`;
    expectLimit(() => parsePtx(declared), 'statements', 2 ** 20 + 10);
  });

  it('parses thousands of variables and entries in linear time', () => {
    const count = 100_000;
    const variables = Array.from({ length: count }, (_, index) => `.shared .b8 v${index};`);
    const entries = Array.from({ length: count }, (_, index) => `.entry e${index}() { ret; }`);
    const module = parsePtx(`${HEADER}${variables.join('\n')}\n${entries.join('\n')}\n`);
    expect([module.variables.length, module.entries.length]).toEqual([count, count]);
  });

  it('refuses an integer literal of a million digits without parsing it', () => {
    expect(() =>
      parsePtx(entry(`.reg .b32 %r<2>;\nmov.u32 %r1, ${'9'.repeat(1_000_000)};`)),
    ).toThrow(PtxSyntaxError);
    expect(parsePtx(entry(`.reg .b32 %r<2>;\nmov.u32 %r1, 0x${'0'.repeat(1000)}1;`))).toBeDefined();
  });
});

describe('findings on hostile text', () => {
  it('quote at most 400 characters of a line megabytes long', () => {
    const line = `.reg .b64 %rd<2>;\n.reg .b32 %r<2>;\nst.global.u32 [%rd1], 1; ${'mov.u32 %r1, 1; '.repeat(100_000)}`;
    const { findings } = simulate(parsePtx(entry(line)), LAUNCH);
    expect(findings.map((finding) => finding.category)).toEqual([
      'out-of-bounds',
      'uninitialized-register',
    ]);
    for (const finding of findings)
      expect(finding.instruction).toMatch(
        /^st\.global\.u32 \[%rd1\], 1; mov.{370,400}… \(1599624 more characters\)$/,
      );
  });
});

describe('the step budget bounds every launch', () => {
  it('counts an empty body and guarded-off instructions, so a huge grid of them ends', () => {
    for (const body of ['', '.reg .pred %p<2>;\nsetp.ne.u32 %p1, 0, 0;\n@%p1 bra $L;\n$L:']) {
      const module = parsePtx(`${HEADER}.visible .entry k()\n{\n${body}\n}\n`);
      expect(() =>
        simulate(module, {
          ...LAUNCH,
          grid: [2 ** 31 - 1, 65535, 65535],
          maxThreadInstructions: 100_000,
        }),
      ).toThrow(StepLimitError);
    }
  });

  it("counts each block's register and shared-memory reset", () => {
    const module = parsePtx(entry('.shared .b8 s[32768];'));
    // 1024 steps of shared-memory reset a block; 32 steps of `ret`.
    expect(() =>
      simulate(module, { ...LAUNCH, grid: [100, 1, 1], maxThreadInstructions: 100 * 1056 - 1 }),
    ).toThrow(StepLimitError);
    expect(
      simulate(module, { ...LAUNCH, grid: [100, 1, 1], maxThreadInstructions: 100 * 1056 })
        .findings,
    ).toEqual([]);
  });
});
