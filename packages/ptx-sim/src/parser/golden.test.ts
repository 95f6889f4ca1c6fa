import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EntryFunction, Instruction, Label, PtxModule } from '../ast.js';
import { parsePtx } from './index.js';

const goldenDirectory = new URL('../../../../golden/ptx/', import.meta.url);
const manifestUrl = new URL('../../../../golden/manifest.json', import.meta.url);
const fixtureUrl = new URL('../fixtures/block-sum.sm_80.ptx', import.meta.url);

interface ManifestEntry {
  readonly file: string;
  readonly kernelId: string;
  readonly target: { readonly kind: string; readonly arch?: string; readonly ptxVersion?: string };
  readonly schedule: { readonly workgroupSize?: number };
}

const manifest = JSON.parse(readFileSync(manifestUrl, 'utf8')) as { entries: ManifestEntry[] };
const goldenFiles = readdirSync(goldenDirectory).filter((file) => file.endsWith('.ptx'));

function parseFile(url: URL): { module: PtxModule; lines: string[] } {
  const text = readFileSync(url, 'utf8');
  return { module: parsePtx(text), lines: text.split('\n') };
}

function onlyEntry(module: PtxModule): EntryFunction {
  expect(module.entries).toHaveLength(1);
  const entry = module.entries[0];
  if (entry === undefined) throw new Error('no entry');
  return entry;
}

function instructions(entry: EntryFunction): Instruction[] {
  return entry.body.filter(
    (statement): statement is Instruction => statement.kind === 'instruction',
  );
}

function labels(entry: EntryFunction): string[] {
  return entry.body
    .filter((statement): statement is Label => statement.kind === 'label')
    .map((label) => label.name);
}

function atLine(entry: EntryFunction, line: number): Instruction {
  const found = instructions(entry).find((instruction) => instruction.location.line === line);
  if (found === undefined) throw new Error(`no instruction on line ${line}`);
  return found;
}

const reg = (name: string) => ({ kind: 'register', name }) as const;
const int = (value: bigint) => ({ kind: 'integer', value }) as const;

describe('golden PTX files', () => {
  it('finds the golden files', () => {
    expect(goldenFiles.length).toBeGreaterThanOrEqual(7);
  });

  for (const file of goldenFiles) {
    it(`parses ${file} with every instruction located on its own source line`, () => {
      const { module, lines } = parseFile(new URL(file, goldenDirectory));
      const meta = manifest.entries.find((entry) => entry.file === `ptx/${file}`);
      if (meta !== undefined) {
        expect(module.target).toBe(meta.target.arch);
        expect(module.version).toBe(meta.target.ptxVersion);
        // Line info names the kernel's printed IR, and covers every instruction.
        expect(module.files).toEqual(new Map([[1, `${meta.kernelId}.forge`]]));
      }
      expect(module.addressSize).toBe(64);
      let statements = 0;
      for (const entry of module.entries) {
        if (meta?.schedule.workgroupSize !== undefined && module.entries.length === 1) {
          expect(entry.requiredThreads).toEqual([meta.schedule.workgroupSize, 1, 1]);
        }
        for (const statement of entry.body) {
          expect(lines[statement.location.line - 1]?.trim()).toBe(statement.location.text);
          if (statement.kind === 'instruction')
            expect(statement.location.source?.at.file, statement.location.text).toBe(1);
        }
        statements += entry.body.length;
      }
      // Every non-blank, non-comment body line of the module's entries became exactly one statement.
      const bodyLines = lines.filter((line) => /^\s*(?:@|[a-z$])/.test(line));
      expect(statements).toBe(bodyLines.length);
    });
  }

  const affine = goldenFiles.filter((file) => file.startsWith('affine-f32.'));
  for (const file of affine) {
    it(`reads the structure of ${file}`, () => {
      const entry = onlyEntry(parseFile(new URL(file, goldenDirectory)).module);
      expect(entry.name).toBe('affine_f32');
      expect(entry.visible).toBe(true);
      expect(entry.params.map((param) => [param.name, param.type, param.align])).toEqual([
        ['param_x', 'u64', 8],
        ['param_y', 'u64', 8],
        ['param_n', 'u32', 4],
        ['param_scale', 'f32', 4],
        ['param_bias', 'f32', 4],
      ]);
      expect(
        entry.registers.map((register) => [register.type, register.name, register.count]),
      ).toEqual([
        ['pred', '%p', 2],
        ['b32', '%r', 8],
        ['f32', '%f', 5],
        ['b64', '%rd', 9],
      ]);
      expect(entry.variables).toEqual([]);
      expect(labels(entry)).toEqual(['$L_loop_1', '$L_endloop_1']);
      const branch = instructions(entry).find((instruction) => instruction.guard !== undefined);
      expect(branch).toMatchObject({
        guard: { register: '%p1', negated: false },
        opcode: 'bra',
        modifiers: [],
        operands: [{ kind: 'symbol', name: '$L_endloop_1' }],
      });
      const fma = instructions(entry).find((instruction) => instruction.opcode === 'fma');
      expect(fma).toMatchObject({
        modifiers: ['rn', 'f32'],
        operands: [reg('%f4'), reg('%f3'), reg('%f1'), reg('%f2')],
      });
      const load = instructions(entry).find((instruction) => instruction.modifiers.includes('nc'));
      expect(load).toMatchObject({
        opcode: 'ld',
        modifiers: ['global', 'nc', 'f32'],
        operands: [reg('%f3'), { kind: 'address', base: reg('%rd6'), offset: 0n }],
      });
      expect(instructions(entry).at(-1)).toMatchObject({ opcode: 'ret', operands: [] });
    });
  }

  const rmsnorm = goldenFiles.filter((file) => file.startsWith('rmsnorm.'));
  for (const file of rmsnorm) {
    it(`reads the structure of ${file}`, () => {
      const { module, lines } = parseFile(new URL(file, goldenDirectory));
      const entry = onlyEntry(module);
      expect(entry.name).toBe('rmsnorm');
      expect(entry.params.map((param) => `${param.type} ${param.name}`)).toEqual([
        'u64 param_x',
        'u64 param_w',
        'u64 param_y',
        'u32 param_n_embd',
        'u32 param_rows',
        'f32 param_eps',
      ]);
      expect(entry.registers.map((register) => `${register.name}<${register.count}>`)).toEqual([
        '%p<17>',
        '%r<59>',
        '%f<138>',
        '%rd<47>',
      ]);
      const workgroupSize = entry.requiredThreads?.[0] ?? 0;
      const lineOf = (needle: string): number =>
        lines.findIndex((line) => line.includes(needle)) + 1;
      expect(entry.variables).toEqual([
        {
          space: 'shared',
          type: 'f32',
          name: 'shared_partial',
          align: 4,
          length: workgroupSize / 32,
          location: {
            line: lineOf('.shared .align 4 .f32 shared_partial['),
            text: `.shared .align 4 .f32 shared_partial[${workgroupSize / 32}];`,
          },
        },
      ]);
      expect(labels(entry)).toEqual([
        '$L_loop_3',
        '$L_endloop_3',
        '$L_else_2',
        '$L_loop_4',
        '$L_endloop_4',
        '$L_endif_2',
        '$L_endif_5',
        '$L_endif_6',
        '$L_loop_8',
        '$L_endif_9',
        '$L_endif_10',
        '$L_endif_11',
        '$L_endif_12',
        '$L_endloop_8',
        '$L_else_7',
        '$L_loop_13',
        '$L_endloop_13',
        '$L_endif_7',
        '$L_endif_1',
      ]);
      expect(atLine(entry, lineOf('@!%p1 bra'))).toMatchObject({
        guard: { register: '%p1', negated: true },
        opcode: 'bra',
        operands: [{ kind: 'symbol', name: '$L_endif_1' }],
      });
      expect(atLine(entry, lineOf('mov.u32 %r3, shared_partial'))).toMatchObject({
        opcode: 'mov',
        modifiers: ['u32'],
        operands: [reg('%r3'), { kind: 'symbol', name: 'shared_partial' }],
      });
      expect(atLine(entry, lineOf('ld.global.nc.v4.f32 {%f3,'))).toMatchObject({
        opcode: 'ld',
        modifiers: ['global', 'nc', 'v4', 'f32'],
      });
      expect(atLine(entry, lineOf('shfl.sync.bfly.b32 %f53'))).toMatchObject({
        opcode: 'shfl',
        modifiers: ['sync', 'bfly', 'b32'],
        operands: [reg('%f53'), reg('%f52'), int(16n), int(31n), int(-1n)],
      });
      expect(atLine(entry, lineOf('div.rn.f32 %f65'))).toMatchObject({
        operands: [reg('%f65'), { kind: 'float', bits: 0x3f800000n, width: 32 }, reg('%f69')],
      });
      expect(atLine(entry, lineOf('mov.u32 %r27, %laneid'))).toMatchObject({
        operands: [reg('%r27'), reg('%laneid')],
      });
      expect(atLine(entry, lineOf('bar.sync 0'))).toMatchObject({
        opcode: 'bar',
        modifiers: ['sync'],
        operands: [int(0n)],
      });
      expect(atLine(entry, lineOf('cvt.rn.f32.u32'))).toMatchObject({
        modifiers: ['rn', 'f32', 'u32'],
      });
    });
  }
});

describe('nvcc fixture block-sum.sm_80.ptx', () => {
  const { module, lines } = parseFile(fixtureUrl);
  const entry = onlyEntry(module);
  const lineOf = (needle: string): number => lines.findIndex((line) => line.includes(needle)) + 1;

  it('reads the module header and the entry signature', () => {
    expect(module).toMatchObject({
      version: '9.0',
      target: 'sm_80',
      addressSize: 64,
      variables: [],
    });
    expect(entry.name).toBe('block_sum');
    expect(entry.visible).toBe(true);
    expect(entry.requiredThreads).toBeUndefined();
    expect(entry.params.map((param) => [param.name, param.type])).toEqual([
      ['block_sum_param_0', 'u64'],
      ['block_sum_param_1', 'u64'],
      ['block_sum_param_2', 'u32'],
    ]);
  });

  it('reads register ranges and the demoted shared array', () => {
    expect(
      entry.registers.map((register) => [register.type, register.name, register.count]),
    ).toEqual([
      ['pred', '%p', 16],
      ['f32', '%f', 29],
      ['b32', '%r', 49],
      ['b64', '%rd', 9],
    ]);
    expect(entry.variables).toMatchObject([
      { space: 'shared', type: 'b8', name: '_ZZ9block_sumE7partial', align: 4, length: 128 },
    ]);
  });

  it('reads labels and instructions, including %r|%p pairs', () => {
    expect(labels(entry)).toEqual(['$L__BB0_2', '$L__BB0_4', '$L__BB0_7', '$L__BB0_9']);
    expect(instructions(entry)).toHaveLength(94);
    expect(atLine(entry, lineOf('shfl.sync.bfly.b32 \t%r10|%p2'))).toMatchObject({
      opcode: 'shfl',
      modifiers: ['sync', 'bfly', 'b32'],
      operands: [
        { kind: 'pair', first: reg('%r10'), second: reg('%p2') },
        reg('%r6'),
        reg('%r8'),
        reg('%r7'),
        reg('%r9'),
      ],
    });
    expect(atLine(entry, lineOf('ld.param.u32'))).toMatchObject({
      operands: [
        reg('%r5'),
        { kind: 'address', base: { kind: 'symbol', name: 'block_sum_param_2' }, offset: 0n },
      ],
    });
    expect(atLine(entry, lineOf('mov.u32 \t%r9, -1'))).toMatchObject({
      operands: [reg('%r9'), int(-1n)],
    });
    expect(atLine(entry, lineOf('and.b32  \t%r25'))).toMatchObject({
      operands: [reg('%r25'), reg('%r24'), int(536870908n)],
    });
    expect(atLine(entry, lineOf('@%p7 bra'))).toMatchObject({
      guard: { register: '%p7', negated: false },
      operands: [{ kind: 'symbol', name: '$L__BB0_4' }],
    });
    expect(atLine(entry, lineOf('cvta.to.global.u64 \t%rd3'))).toMatchObject({
      opcode: 'cvta',
      modifiers: ['to', 'global', 'u64'],
    });
    expect(atLine(entry, lineOf('mov.f32 \t%f27, 0f00000000'))).toMatchObject({
      operands: [reg('%f27'), { kind: 'float', bits: 0n, width: 32 }],
    });
  });
});
