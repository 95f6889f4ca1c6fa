import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG, getKernel } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import { printPtxIr } from './printed-ir.js';
import { PTX_ARCHS, ptxTarget, type PtxArch } from './targets.js';

/** The instructions one `.loc` covers, up to the next `.loc` or the end of its entry. */
interface LocGroup {
  readonly line: number;
  /** The statement comment right above the `.loc`, when there is one. */
  readonly comment?: string;
  readonly instructions: string[];
}

/** Every entry's `.loc` groups; throws on an instruction that no `.loc` covers. */
function locGroups(source: string): LocGroup[][] {
  const entries: LocGroup[][] = [];
  let groups: LocGroup[] | undefined;
  let previous = '';
  for (const raw of source.split('\n')) {
    const text = raw.trim();
    if (text.startsWith('.visible .entry')) entries.push((groups = []));
    const loc = /^\.loc 1 (\d+) 1$/.exec(text);
    const instruction =
      raw.startsWith('\t') && !/^(\/\/|\.)/.test(text) && text !== 'ret;' && groups !== undefined;
    if (loc !== null && groups !== undefined) {
      const comment = /^\/\/ (.*)$/.exec(previous)?.[1];
      groups.push({ line: Number(loc[1]), instructions: [], ...(comment ? { comment } : {}) });
    } else if (instruction) {
      const group = groups?.at(-1);
      if (group === undefined) throw new Error(`no .loc before '${text}'`);
      group.instructions.push(text);
    }
    if (text !== '') previous = text;
  }
  return entries;
}

const BRANCH = /^(@!?%p\d+ )?bra(\.uni)? \$L_/;
const MEMORY_OR_SYNC = /^(ld|st|bar|shfl|mma)\./;

/** What the instructions of a statement printed as `printed` must look like; a message if not. */
function mismatch(printed: string, instructions: readonly string[]): string | undefined {
  const text = printed.trim();
  const has = (pattern: RegExp) => instructions.some((instruction) => pattern.test(instruction));
  const last = instructions.at(-1) ?? '';
  const stores = has(/^st\./);
  if (/^(kernel|then) /.test(text))
    return instructions.every((instruction) =>
      /^(ld\.param|cvta\.to\.global|mov\.u32 %r\d+, shared_)/.test(instruction),
    )
      ? undefined
      : 'a signature line covers only parameter and address loads';
  if (text === 'barrier')
    return instructions.join() === 'bar.sync 0;' ? undefined : 'a barrier is one bar.sync';
  if (/^(for|if) /.test(text))
    return BRANCH.test(last) && !stores ? undefined : `'${text}' ends in a branch`;
  if (/^let .* = shuffle_/.test(text))
    return has(/^shfl\.sync/) && !stores ? undefined : 'a shuffle has shfl.sync';
  if (/^let .* = mma_/.test(text)) return has(/^mma\.sync/) ? undefined : 'an mma has mma.sync';
  if (/^\w+\[.*\] = /.test(text))
    return /^st\./.test(last) && !has(BRANCH) ? undefined : 'a store ends in st';
  // A let or assignment: loads where the printed expression indexes memory, nothing else of note.
  const loads = /\w\[/.test(text.slice(text.indexOf('=')));
  if (loads !== has(/^ld\.(global|shared)/)) return `ld iff '${text}' indexes memory`;
  const others = instructions.filter(
    (instruction) => MEMORY_OR_SYNC.test(instruction) && !/^ld\.(global|shared)/.test(instruction),
  );
  return others.length === 0 && !has(BRANCH) ? undefined : `'${text}' has ${others.join()}`;
}

/** Checks every `.loc` of an emitted module against the printed IR; returns how many it checked. */
function checkLineInfo(id: string, arch: PtxArch): number {
  const { spec } = getKernel(id);
  const { source } = emitPtx(spec, {}, ptxTarget(arch));
  const printed = printPtxIr(spec, {}, ptxTarget(arch));
  const lines = printed.text.split('\n');
  expect(source.match(/^\.file .*$/gm)).toEqual([`.file 1 "${id}.forge"`]);
  let checked = 0;
  for (const [entry, groups] of locGroups(source).entries()) {
    // The prologue belongs to the dispatch's signature: `kernel …`, or `then <entry>` for a stage.
    const signature = lines[(groups[0]?.line ?? 0) - 1];
    expect(signature, `${id} ${arch} entry ${entry}`).toMatch(entry === 0 ? /^kernel / : /^then /);
    groups.forEach((group, index) => {
      const printedLine = lines[group.line - 1];
      const where = `${id} ${arch} .loc 1 ${group.line} (${printedLine})`;
      expect(printedLine, where).toBeDefined();
      expect(group.line, `${where}: only a moved line gets a .loc`).not.toBe(
        groups[index - 1]?.line,
      );
      expect(group.instructions.length, where).toBeGreaterThan(0);
      if (group.comment !== undefined)
        expect(group.comment, where).toBe(printedLine?.trim().replace(/ \{$/, ''));
      expect(mismatch(printedLine ?? '', group.instructions), where).toBeUndefined();
      checked++;
    });
  }
  return checked;
}

describe('PTX line info', () => {
  it('every .loc of every catalog kernel names the printed-IR statement its instructions render', () => {
    let checked = 0;
    for (const id of CATALOG.keys()) checked += checkLineInfo(id, 'sm_80');
    // sm_75 lowers mma to shuffles and widens f16 math: the printed IR shows the lowered form.
    for (const id of ['wmma-gemv', 'q4k-soa-wmma', 'rmsnorm'])
      checked += checkLineInfo(id, 'sm_75');
    expect(checked).toBeGreaterThan(2000);
  });

  it('a statement whose line the IR misplaced would fail the check', () => {
    expect(mismatch('  y[i] = x[i]', ['ld.global.nc.f32 %f1, [%rd2];'])).toBeDefined();
    expect(mismatch('  let a: f32 = (b + c)', ['ld.global.nc.f32 %f1, [%rd2];'])).toBeDefined();
    expect(mismatch('  let a: f32 = x[i]', ['add.f32 %f1, %f2, %f3;'])).toBeDefined();
    expect(mismatch('  barrier', ['st.shared.f32 [%r3], %f1;'])).toBeDefined();
    expect(mismatch('  y[i] = x[i]', ['ld.global.f32 %f1, [%rd2];', 'st.global.f32 [%rd3], %f1;']))
      .toBeUndefined(); // prettier-ignore
  });

  it('attributes a loop step and back-branch to the loop header, not to its last statement', () => {
    const { source } = emitPtx(getKernel('affine-f32').spec, {}, ptxTarget('sm_80'));
    const printed = printPtxIr(getKernel('affine-f32').spec, {}, ptxTarget('sm_80')).text;
    expect(printed.split('\n').slice(3, 5)).toEqual([
      '  for i: u32 = ((workgroup_id.x * 256u32) + local_id); < n; += stride {',
      '    y[i] = fma(x[i], scale, bias)',
    ]);
    expect(source).toMatch(
      /\.loc 1 4 1\n[^]*\$L_loop_1:[^]*\.loc 1 5 1\n[^]*st\.global\.f32[^\n]*\n\t\.loc 1 4 1\n\tadd\.u32[^\n]*\n\tbra\.uni \$L_loop_1;/,
    );
  });

  it('prints the same IR text for the same arguments as emitPtx, per schedule and arch', () => {
    const { spec } = getKernel('rmsnorm');
    const small = printPtxIr(spec, { workgroupSize: 64 }, ptxTarget('sm_90'));
    expect(small.name).toBe('rmsnorm.forge');
    expect(small.text).toContain('  workgroup 64, grid (rows, 1, 1)');
    expect(small.text).not.toBe(printPtxIr(spec, {}, ptxTarget('sm_90')).text);
    expect(small.text).not.toContain('schedule.');
    expect(small.text).not.toContain('warp_reduce_');
  });

  it('ptxas records the printed IR as the line table source and compiles the same SASS', () => {
    const directory = mkdtempSync(join(tmpdir(), 'forge-lineinfo-'));
    try {
      for (const arch of PTX_ARCHS) {
        const input = join(directory, `${arch}.ptx`);
        writeFileSync(input, emitPtx(getKernel('rmsnorm').spec, {}, ptxTarget(arch)).source);
        const cubin = (options: string[]): Buffer => {
          const output = join(directory, `${arch}.cubin`);
          const run = spawnSync(process.env['PTXAS'] ?? 'ptxas', [
            `-arch=${arch}`,
            ...options,
            input,
            '-o',
            output,
          ]);
          expect(`${run.stderr}`, arch).toBe('');
          expect(run.status, arch).toBe(0);
          return readFileSync(output);
        };
        // ptxas 13 keeps `.loc` line info with or without -lineinfo; -suppress-debug-info drops it.
        const [lineInfo, plain, suppressed] = [['-lineinfo'], [], ['-suppress-debug-info']].map(
          cubin,
        );
        expect(lineInfo?.includes('rmsnorm.forge'), arch).toBe(true);
        expect(suppressed?.includes('rmsnorm.forge'), arch).toBe(false);
        const code = textSections(suppressed ?? Buffer.alloc(0));
        expect(code.size, arch).toBe(1);
        for (const binary of [lineInfo, plain])
          expect(textSections(binary ?? Buffer.alloc(0)), arch).toEqual(code);
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

/** The `.text.<entry>` sections (the SASS) of a 64-bit little-endian ELF file, by name. */
function textSections(elf: Buffer): Map<string, Buffer> {
  const headers = Number(elf.readBigUInt64LE(0x28));
  const [size, count, names] = [
    elf.readUInt16LE(0x3a),
    elf.readUInt16LE(0x3c),
    elf.readUInt16LE(0x3e),
  ];
  const section = (index: number) => {
    const at = headers + index * size;
    const offset = Number(elf.readBigUInt64LE(at + 0x18));
    return {
      name: elf.readUInt32LE(at),
      bytes: elf.subarray(offset, offset + Number(elf.readBigUInt64LE(at + 0x20))),
    };
  };
  const table = section(names).bytes;
  const sections = new Map<string, Buffer>();
  for (let index = 0; index < count; index++) {
    const { name, bytes } = section(index);
    const text = table.toString('latin1', name, table.indexOf(0, name));
    if (text.startsWith('.text.')) sections.set(text, bytes);
  }
  return sections;
}
