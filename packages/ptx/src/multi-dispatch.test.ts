import { describe, expect, it } from 'vitest';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { simulateShader, simulateShaderDispatches } from './simulate.js';
import { ptxTarget } from './targets.js';
import { TWO_STAGE_SUM } from '@forge/test-fixtures';

function xs(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, index) => (index % 7) - 3 + index / 8);
}

describe('emitPtx of a multi-dispatch kernel', () => {
  const shader = emitPtx(TWO_STAGE_SUM, { chunk: 128 }, ptxTarget('sm_80'));

  it('renders one module with an entry per dispatch, scratch after the buffers', () => {
    const entries = [
      ...shader.source.matchAll(/\.visible \.entry (\w+)\(([^)]*)\)\n\.reqntid (\d+)/g),
    ];
    expect(entries.map((entry) => [entry[1], entry[3]])).toEqual([
      ['partial_sums', '128'],
      ['combine', '32'],
    ]);
    for (const entry of entries)
      expect(entry[2]?.match(/param_\w+/g)).toEqual([
        'param_x',
        'param_y',
        'param_partials',
        'param_n',
      ]);
    expect(shader.source.match(/^\.version/gm)).toHaveLength(1);
    // Each entry declares its own `sums`, at its own length.
    expect(shader.source).toMatch(/\.shared .*sums\[128\];[\s\S]*\.shared .*sums\[32\];/);
  });

  it('describes every dispatch and the scratch sizes in the launch metadata', () => {
    const { launch } = shader;
    expect(launch.entryPoint).toBe('partial_sums');
    expect(launch.dispatches).toEqual([
      {
        entryPoint: 'partial_sums',
        workgroupSize: [128, 1, 1],
        grid: ['ceil_div(n, 128)', '1', '1'],
        sharedBytes: 512,
      },
      { entryPoint: 'combine', workgroupSize: [32, 1, 1], grid: ['1', '1', '1'], sharedBytes: 128 },
    ]);
    expect(launch.scratch).toEqual([
      {
        name: 'partials',
        group: 0,
        binding: 2,
        element: 'f32',
        length: 'ceil_div(n, 128)',
        bytes: '4 * ceil_div(n, 128)',
      },
    ]);
    expect(
      launch.parameters.map(
        (parameter) => `${parameter.name}:${parameter.kind}@${parameter.offset}`,
      ),
    ).toEqual(['x:buffer@0', 'y:buffer@8', 'partials:scratch@16', 'n:scalar@24']);
  });

  it('assembles with ptxas, reporting every entry, none spilling', () => {
    for (const arch of ['sm_75', 'sm_80', 'sm_90'] as const) {
      const result = assemblePtx(emitPtx(TWO_STAGE_SUM, {}, ptxTarget(arch)).source, arch);
      expect(result.diagnostics).toBe('');
      expect(result.ok).toBe(true);
      expect(result.entries?.map((entry) => entry.name)).toEqual(['partial_sums', 'combine']);
      for (const entry of result.entries ?? []) {
        expect(entry.registers).toBeGreaterThan(0);
        expect([entry.spillStores, entry.spillLoads, entry.stackBytes]).toEqual([0, 0, 0]);
      }
      expect(result.registers).toBe(Math.max(...(result.entries ?? []).map((e) => e.registers)));
    }
  });

  it.each([1, 127, 128, 129, 1000])('runs both dispatches on the simulator (n = %i)', (n) => {
    const x = xs(n);
    const y = new Float32Array(1);
    const partials = new Float32Array(Math.ceil(n / 128));
    const results = simulateShaderDispatches(shader, { x, y, partials }, { n });
    expect(results.map((result) => result.findings)).toEqual([[], []]);
    expect(results.map((result) => result.grid[0])).toEqual([partials.length, 1]);
    expect(results.map((result) => result.block[0])).toEqual([128, 32]);
    const expected = x.reduce((sum, value) => sum + value, 0);
    expect(y[0]).toBeCloseTo(expected, 3);
    expect(partials[0]).toBeCloseTo(
      x.subarray(0, 128).reduce((sum, value) => sum + value, 0),
      4,
    );
  });

  it('starts at firstDispatch, reading the scratch an earlier launch left', () => {
    const x = xs(300);
    const y = new Float32Array(1);
    const partials = Float32Array.of(1, 2, 4);
    const results = simulateShaderDispatches(shader, { x, y, partials }, { n: 300 }, { firstDispatch: 1 }); // prettier-ignore
    expect(results.map((result) => result.block[0])).toEqual([32]);
    // Only the combine ran: it summed the partials it was given, not x.
    expect(y[0]).toBe(7);
    expect(() =>
      simulateShaderDispatches(shader, { x, y, partials }, { n: 300 }, { firstDispatch: 2 }),
    ).toThrow('firstDispatch: 2 is not a dispatch (0 to 1)');
  });

  it('allocates scratch itself and sums the counters of the dispatches', () => {
    const y = new Float32Array(1);
    const result = simulateShader(shader, { x: xs(300), y }, { n: 300 });
    expect(result.findings).toEqual([]);
    expect(y[0]).toBeCloseTo(
      xs(300).reduce((sum, value) => sum + value, 0),
      3,
    );
    // 3 partials written by the first dispatch, read by the second.
    expect(result.counters.buffers['param_partials']?.bytesWritten).toBe(12);
    expect(result.counters.buffers['param_partials']?.bytesRead).toBe(12);
  });
});
