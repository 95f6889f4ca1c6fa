import { describe, expect, it } from 'vitest';
import { CATALOG } from '@forge/ir/kernels';
import { emitPtx } from './emit.js';
import {
  assemblePtxAsync,
  assemblePtxBatchAsync,
  mergePtxModules,
  ptxModuleParts,
  type PtxasResult,
} from './ptxas.js';
import { ptxTarget } from './targets.js';

const emitted = (id: string, schedule: Record<string, number>, arch: string): string => {
  const kernel = CATALOG.get(id);
  if (kernel === undefined) throw new Error(`no catalog kernel ${id}`);
  return emitPtx(kernel.spec, schedule, ptxTarget(arch)).source;
};

// Diagnostics name the temporary file, which differs from run to run.
const anonymous = (report: PtxasResult): PtxasResult => ({
  ...report,
  diagnostics: report.diagnostics.replace(/\S*kernel\.ptx/g, 'kernel.ptx'),
});

const alone = (sources: readonly string[], arch: string): Promise<PtxasResult[]> =>
  Promise.all(sources.map((source) => assemblePtxAsync(source, arch)));

describe('mergePtxModules', () => {
  it('keeps one header, renumbers each module’s .file and .loc, and renames its entries', () => {
    const sources = [emitted('rmsnorm', {}, 'sm_80'), emitted('sdpa-decode', {}, 'sm_80')];
    const parts = sources.map(ptxModuleParts);
    if (parts[0] === undefined || parts[1] === undefined) throw new Error('unmergeable');
    const merged = mergePtxModules([parts[0], parts[1]]);
    expect(merged.source.match(/^\.target /gm)).toHaveLength(1);
    expect(merged.source).toMatch(/^\.file 1 "rmsnorm\.forge"$/m);
    expect(merged.source).toMatch(/^\.file 2 "sdpa-decode\.forge"$/m);
    expect(merged.entries).toEqual([
      [{ name: 'rmsnorm', renamed: 'rmsnorm$0' }],
      [
        { name: 'sdpa_decode', renamed: 'sdpa_decode$1' },
        { name: 'sdpa_decode_combine', renamed: 'sdpa_decode_combine$1' },
      ],
    ]);
    const second = merged.source.slice(merged.source.indexOf('.entry sdpa_decode$1'));
    expect(second).toMatch(/\.loc 2 \d+ 1/);
    expect(second).not.toMatch(/\.loc 1 /);
    expect(merged.source).toMatch(/\.visible \.entry sdpa_decode_combine\$1\(/);
  });

  it('leaves alone modules it cannot merge safely', () => {
    const source = emitted('add', {}, 'sm_80');
    expect(ptxModuleParts(source)).toBeDefined();
    const header = '.version 7.0\n.target sm_80\n.address_size 64\n';
    const entry = '.visible .entry k()\n{\n\tret;\n}\n';
    expect(ptxModuleParts(`${header}.global .u32 counter;\n${entry}`)).toBeUndefined();
    expect(ptxModuleParts(`${header}.func f()\n{\n\tret;\n}\n${entry}`)).toBeUndefined();
    expect(ptxModuleParts(`${header}${entry.replace('k()', 'k$1()')}`)).toBeUndefined();
    expect(ptxModuleParts(`${header}/* note */\n${entry}`)).toBeUndefined();
    expect(ptxModuleParts(header)).toBeUndefined();
    expect(() => mergePtxModules([])).toThrow(/one header/);
  });
});

describe('assemblePtxBatchAsync', () => {
  it('reports real kernels as assembling each alone does', async () => {
    // Single- and multi-entry kernels (gemv + rows, attention + combine, argmax + combine), a
    // tensor-core one, and two schedules of one kernel.
    const sources = [
      ...['rmsnorm', 'q8_0-gemv', 'sdpa-decode', 'argmax', 'wmma-gemv', 'get-rows-q4k', 'rope'].map(
        (id) => emitted(id, {}, 'sm_86'),
      ),
      emitted('sdpa-decode', { warps: 2, splits: 8, heads: 2 }, 'sm_86'),
      emitted('rmsnorm', { workgroupSize: 64 }, 'sm_86'),
    ];
    // The batch merges them all: ptxas passes the merged module cleanly.
    const parts = sources.map(ptxModuleParts).filter((part) => part !== undefined);
    expect(parts).toHaveLength(sources.length);
    const merged = await assemblePtxAsync(mergePtxModules(parts).source, 'sm_86');
    expect(merged).toMatchObject({ ok: true, diagnostics: '' });
    const batched = await assemblePtxBatchAsync(sources, 'sm_86');
    expect(batched).toEqual(await alone(sources, 'sm_86'));
    expect(batched.every((report) => report.ok && report.registers > 0)).toBe(true);
    expect(batched[1]?.entries?.map((entry) => entry.name)).toEqual([
      'q8_0_gemv',
      'q8_0_gemv_rows',
    ]);
  }, 120_000);

  it('merges every catalog kernel at its default schedule', () => {
    for (const id of CATALOG.keys())
      expect(ptxModuleParts(emitted(id, {}, 'sm_80')), id).toBeDefined();
  });

  it('attributes a failure to the module that fails, with its own diagnostics', async () => {
    const broken = emitted('add', {}, 'sm_80').replace(/\tret;/, '\tadd.f32 %f1, %f2;\n\tret;');
    const sources = [emitted('rmsnorm', {}, 'sm_80'), broken, emitted('argmax', {}, 'sm_80')];
    const batched = await assemblePtxBatchAsync(sources, 'sm_80');
    expect(batched.map((report) => report.ok)).toEqual([true, false, true]);
    expect(batched[1]?.diagnostics).toMatch(/error/i);
    expect(batched.map(anonymous)).toEqual((await alone(sources, 'sm_80')).map(anonymous));
  }, 60_000);

  it('assembles modules of different headers apart, and one module as assemblePtxAsync', async () => {
    const sources = [
      emitted('add', {}, 'sm_80'),
      emitted('add', {}, 'sm_80').replace(/^\.version \S+/m, '.version 8.0'),
      emitted('silu-mul', {}, 'sm_80'),
    ];
    expect(await assemblePtxBatchAsync(sources, 'sm_80')).toEqual(await alone(sources, 'sm_80'));
    expect(await assemblePtxBatchAsync(sources.slice(0, 1), 'sm_80')).toEqual(
      await alone(sources.slice(0, 1), 'sm_80'),
    );
    expect(await assemblePtxBatchAsync([], 'sm_80')).toEqual([]);
  }, 60_000);
});
