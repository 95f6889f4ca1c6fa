import { describe, expect, it } from 'vitest';
import { ForgeError, resolveSchedule } from '@forge/ir';
import {
  GET_ROWS_OUT_OF_RANGE,
  checkCase,
  getKernel,
  makeCaseInputs,
  type CatalogKernel,
} from '@forge/ir/kernels';
import { EXECUTION_CASES, executionCasesFor, type ExecutionCase } from './execution-cases.js';
import { sampleForTier, testTier } from './test-tier.js';
import { GET_ROWS_WIDTHS } from './get-rows-cases.js';
import { UNPACK_HALF_PROBE } from './unpack-half-probe.js';

const casesOf = (kernelId: string): ExecutionCase[] =>
  EXECUTION_CASES.filter((testCase) => testCase.kernelId === kernelId);

const find = (predicate: (testCase: ExecutionCase) => boolean): ExecutionCase => {
  const found = EXECUTION_CASES.find(predicate);
  if (found === undefined) throw new Error('no such case');
  return found;
};

/** The float64 reference rounded to f32: what a perfect f32 engine would write. */
function perfectOutputs(testCase: ExecutionCase): Record<string, Float32Array | Uint32Array> {
  const kernel = getKernel(testCase.kernelId);
  const inputs = makeCaseInputs(kernel, testCase);
  const expected = kernel.reference(inputs, kernel.params(testCase.shape));
  // u32 outputs (f16 cache words) keep every bit: f32 holds only 24.
  const isU32 = (name: string) =>
    kernel.spec.buffers.some((buffer) => buffer.name === name && buffer.element === 'u32');
  return Object.fromEntries(
    Object.entries(expected).map(([name, values]) => [
      name,
      isU32(name) ? Uint32Array.from(values) : Float32Array.from(values),
    ]),
  );
}

describe('EXECUTION_CASES', () => {
  it('have unique names and seeds', () => {
    const names = EXECUTION_CASES.map((testCase) => testCase.name);
    expect(new Set(names).size).toBe(names.length);
    const seeds = EXECUTION_CASES.map((testCase) => testCase.seed);
    expect(new Set(seeds).size).toBe(seeds.length);
  });

  it('cover wmma-gemv: every n_cols, n_out and n_in of issue #14 on every engine, 1 and 8 warps', () => {
    const values = { n_cols: [1, 2, 7, 8, 16], n_out: [1, 15, 16, 17, 256], n_in: [16, 256, 4096] };
    for (const engine of ['interpreter', 'webgpu', 'ptx-sim'] as const) {
      const cases = executionCasesFor(engine).filter((c) => c.kernelId === 'wmma-gemv');
      for (const [name, wanted] of Object.entries(values))
        for (const value of wanted)
          expect(cases.some((c) => c.shape[name] === value), `${engine} ${name}=${value}`).toBe(true); // prettier-ignore
    }
    const warps = casesOf('wmma-gemv').map((c) => c.schedule['warps']);
    for (const count of [1, 3, 8]) expect(warps).toContain(count);
  });

  it('cover q4k-soa-wmma: every n_cols, n_out and n_in of issue #14 on every engine', () => {
    const values = { n_cols: [1, 2, 7, 8, 16], n_out: [1, 15, 16, 17, 256], n_in: [256, 4096] };
    for (const engine of ['interpreter', 'webgpu', 'ptx-sim'] as const) {
      const cases = executionCasesFor(engine).filter((c) => c.kernelId === 'q4k-soa-wmma');
      for (const [name, wanted] of Object.entries(values))
        for (const value of wanted)
          expect(cases.some((c) => c.shape[name] === value), `${engine} ${name}=${value}`).toBe(true); // prettier-ignore
    }
    const warps = casesOf('q4k-soa-wmma').map((c) => c.schedule['warps'] ?? 4);
    for (const count of [1, 3, 4, 8]) expect(warps).toContain(count);
  });

  it('cover add, silu-mul and argmax: the sizes of issue #15, 32 and 1024 threads, every family', () => {
    for (const kernelId of ['add', 'silu-mul', 'argmax']) {
      const cases = casesOf(kernelId);
      const defaults = cases.filter((c) => Object.keys(c.schedule).length === 0);
      for (const n of [1, 7, 255, 256, 257, 4096, 32000])
        expect(defaults.some((c) => c.shape['n'] === n && c.family === undefined), `${kernelId} n=${n}`).toBe(true); // prettier-ignore
      for (const size of [32, 1024])
        expect(cases.some((c) => c.schedule['workgroupSize'] === size), `${kernelId} ${size}`).toBe(true); // prettier-ignore
      const families = getKernel(kernelId).inputFamilies ?? [];
      for (const family of families) expect(cases.some((c) => c.family === family)).toBe(true);
    }
    expect(getKernel('argmax').inputFamilies).toEqual(
      expect.arrayContaining(['ties', 'max-first', 'max-last', 'all-equal', 'negative']),
    );
    expect(casesOf('silu-mul').some((c) => c.family === 'extremes')).toBe(true);
    // A capped grid (65535 workgroups of 32) with a second grid-stride round, and 2^24 logits.
    for (const kernelId of ['add', 'silu-mul'])
      expect(casesOf(kernelId).some((c) => (c.shape['n'] ?? 0) > 65535 * 32 * 4 && c.schedule['workgroupSize'] === 32)).toBe(true); // prettier-ignore
    expect(casesOf('argmax').some((c) => (c.shape['n'] ?? 0) > 2 ** 24)).toBe(true);
  });

  it('cover f32-gemv and f16-gemv: n_out 1, 15, 16, 17, 256 by the n_in of issue #15, knob edges', () => {
    const nIn = { 'f32-gemv': [1, 2, 255, 4096, 11008], 'f16-gemv': [2, 256, 4096, 11008] };
    for (const [kernelId, widths] of Object.entries(nIn)) {
      const cases = casesOf(kernelId);
      for (const engine of ['interpreter', 'webgpu', 'ptx-sim'] as const)
        expect(executionCasesFor(engine).filter((c) => c.kernelId === kernelId)).toEqual(cases);
      for (const value of [1, 15, 16, 17, 256])
        expect(cases.some((c) => c.shape['n_out'] === value), `${kernelId} n_out=${value}`).toBe(true); // prettier-ignore
      for (const value of widths)
        expect(cases.some((c) => c.shape['n_in'] === value), `${kernelId} n_in=${value}`).toBe(true); // prettier-ignore
      // Rows whose x starts mid-vector (n_in not a multiple of 4) take the scalar x path.
      expect(cases.some((c) => (c.shape['n_in'] ?? 0) % 4 === 2)).toBe(true);
      const knob = (name: string) => cases.map((c) => c.schedule[name]);
      for (const size of [32, 512]) expect(knob('workgroupSize')).toContain(size);
      for (const count of [1, 4]) expect(knob('vectors')).toContain(count);
    }
  });

  it('cover the affine-f32 sizes the issue asks for, at the default schedule and at 64 threads', () => {
    const defaults = casesOf('affine-f32').filter((c) => Object.keys(c.schedule).length === 0);
    expect(defaults.map((c) => c.shape['n'])).toEqual([1, 7, 255, 256, 257, 4096, 5000]);
    expect(casesOf('affine-f32').some((c) => c.schedule['workgroupSize'] === 64)).toBe(true);
  });

  it('cover rmsnorm: 3 rows, every width at every magnitude, a zero row, other workgroup sizes', () => {
    const defaults = casesOf('rmsnorm').filter(
      (c) => Object.keys(c.schedule).length === 0 && c.zeroRows === undefined,
    );
    for (const nEmbd of [1, 7, 32, 4096, 5000]) {
      for (const magnitude of [1e-3, 1, 1e3]) {
        expect(
          defaults.some(
            (c) =>
              c.shape['n_embd'] === nEmbd && c.shape['rows'] === 3 && c.magnitude === magnitude,
          ),
          `n_embd=${nEmbd} magnitude=${magnitude}`,
        ).toBe(true);
      }
    }
    expect(casesOf('rmsnorm').some((c) => c.zeroRows?.includes(1) === true)).toBe(true);
    const sizes = new Set(casesOf('rmsnorm').map((c) => c.schedule['workgroupSize']));
    for (const size of [32, 128, 1024]) expect(sizes.has(size)).toBe(true);
    for (const testCase of casesOf('rmsnorm')) expect(testCase.magnitudes?.['w']).toBe(1);
  });

  // The largest workgroup in bounds (256: ptxas keeps a step's loads in registers), and n_in past 4096.
  const expectLargestGroupAndTwoTiles = (gemv: readonly ExecutionCase[]) => {
    expect(gemv.some((c) => c.schedule['workgroupSize'] === 256)).toBe(true);
    expect(gemv.some((c) => (c.shape['n_in'] ?? 0) > 4096)).toBe(true);
  };

  it('cover q8_0-gemv: n_out 1, 3, 64, 1000 by n_in 32, 512, 8192, ragged steps, traffic bounds', () => {
    const gemv = casesOf('q8_0-gemv');
    for (const nIn of [32, 512, 8192]) {
      for (const nOut of [1, 3, 64, 1000]) {
        expect(
          gemv.some((c) => c.shape['n_in'] === nIn && c.shape['n_out'] === nOut),
          `${nOut} x ${nIn}`,
        ).toBe(true);
      }
    }
    // Rows whose last step is ragged (a step is 32 blocks, 1024 values).
    expect(gemv.some((c) => ((c.shape['n_in'] ?? 0) / 32) % 32 !== 0)).toBe(true);
    expectLargestGroupAndTwoTiles(gemv);
    // Large matrices: 48 bytes asked for a 34-byte block, half of each sector used.
    const large = gemv.filter((c) => (c.shape['n_in'] ?? 0) * (c.shape['n_out'] ?? 0) >= 2 ** 19);
    for (const { weightTraffic } of large) {
      expect(weightTraffic?.maxReadRatio).toBeLessThan(1.42);
      expect(weightTraffic?.minSectorEfficiency).toBeGreaterThan(0.49);
    }
  });

  it('cover q4k-gemv: n_out 1, 3, 64, 1000 by n_in 256, 512, 8192, ragged steps, traffic bounds', () => {
    const gemv = casesOf('q4k-gemv');
    for (const nIn of [256, 512, 8192]) {
      for (const nOut of [1, 3, 64]) {
        expect(
          gemv.some((c) => c.shape['n_in'] === nIn && c.shape['n_out'] === nOut),
          `${nOut} x ${nIn}`,
        ).toBe(true);
      }
    }
    expect(gemv.some((c) => c.shape['n_out'] === 1000 && c.shape['n_in'] === 8192)).toBe(true);
    // Rows whose last step is ragged (2304 values: 9 blocks, a step of 8 and 1).
    expect(gemv.some((c) => ((c.shape['n_in'] ?? 0) / 256) % 8 !== 0)).toBe(true);
    expectLargestGroupAndTwoTiles(gemv);
    for (const { weightTraffic, shape } of gemv) {
      // An odd n_out's last warp re-reads the last row for its second: one row more.
      const nOut = shape['n_out'] ?? 1;
      expect(weightTraffic?.maxReadRatio).toBeCloseTo((1.02 * (nOut + (nOut % 2))) / nOut, 12);
      expect(weightTraffic?.minSectorEfficiency).toBeGreaterThanOrEqual(0.64);
    }
  });

  it('cover q6k-gemv: n_out 1, 3, 64, 1000 by n_in 256, 512, 8192, ragged steps, traffic bounds', () => {
    const gemv = casesOf('q6k-gemv');
    for (const nIn of [256, 512, 8192])
      for (const nOut of [1, 3, 64])
        expect(gemv.some((c) => c.shape['n_in'] === nIn && c.shape['n_out'] === nOut)).toBe(true);
    expect(gemv.some((c) => c.shape['n_out'] === 1000 && c.shape['n_in'] === 8192)).toBe(true);
    // The smallest and largest PTX workgroups of the row-streaming scaffold.
    for (const size of [32, 256])
      expect(gemv.some((c) => c.schedule['workgroupSize'] === size)).toBe(true);
    // An odd block count (rows 2 bytes into a word), and a ragged last step past the first.
    expect(gemv.some((c) => ((c.shape['n_in'] ?? 0) / 256) % 2 === 1)).toBe(true);
    expect(
      gemv.some((c) => ((c.shape['n_in'] ?? 0) / 256) % 8 !== 0 && (c.shape['n_in'] ?? 0) > 2048),
    ).toBe(true);
    for (const { shape, weightTraffic } of gemv) {
      const nOut = shape['n_out'] ?? 1;
      expect(weightTraffic?.maxReadRatio).toBeCloseTo((1.51 * (nOut + (nOut % 2))) / nOut, 12);
      expect(weightTraffic?.minSectorEfficiency).toBe(0.3);
    }
  });

  it('cover q6k-soa-gemv: n_out 1, 3, 64, 1000 by n_in 256, 512, 8192, ragged steps, traffic bounds', () => {
    const gemv = casesOf('q6k-soa-gemv');
    for (const nIn of [256, 512, 8192])
      for (const nOut of [1, 3, 64])
        expect(gemv.some((c) => c.shape['n_in'] === nIn && c.shape['n_out'] === nOut)).toBe(true);
    expect(gemv.some((c) => c.shape['n_out'] === 1000 && c.shape['n_in'] === 8192)).toBe(true);
    // The smallest and largest PTX workgroups of the row-streaming scaffold.
    for (const size of [32, 256])
      expect(gemv.some((c) => c.schedule['workgroupSize'] === size)).toBe(true);
    // Rows of more than one step of 8 blocks whose last step is ragged (2304 values: 8 and 1).
    expect(
      gemv.some((c) => ((c.shape['n_in'] ?? 0) / 256) % 8 !== 0 && (c.shape['n_in'] ?? 0) > 2048),
    ).toBe(true);
    for (const c of gemv)
      expect(c.weightTraffic).toEqual({
        maxReadRatio: 1.02,
        minSectorEfficiency: c.shape['n_in'] === 256 ? 0.8 : 0.9,
      });
  });

  it('cover sdpa-decode: the n_kv, head ratios, head_dims, windows and families of the issue', () => {
    const sdpa = casesOf('sdpa-decode');
    const at = (name: string) => (c: ExecutionCase) => c.shape[name] ?? 0;
    const ratio = (c: ExecutionCase) => `${c.shape['n_head']}/${c.shape['n_kv_head']}`;
    for (const nKv of [1, 2, 31, 32, 33, 257, 1000, 4096])
      expect(sdpa.map(at('n_kv'))).toContain(nKv);
    for (const heads of ['8/8', '8/2', '32/8', '4/1']) expect(sdpa.map(ratio)).toContain(heads);
    for (const headDim of [32, 64, 128]) expect(sdpa.map(at('head_dim'))).toContain(headDim);
    for (const family of ['uniform', 'dominant', 'equal-scores', 'large-q'])
      expect(sdpa.map((c) => c.family)).toContain(family);
    const windowed = sdpa.filter((c) => at('window')(c) > 0);
    expect(windowed.map(at('window'))).toEqual(expect.arrayContaining([1, 100]));
    // A window wider than n_kv hides nothing; one narrower hides the head of the cache.
    expect(windowed.some((c) => at('window')(c) > at('n_kv')(c))).toBe(true);
    for (const c of windowed) expect(c.partlyRead).toEqual(['k', 'v']);
    expect(casesOf('sdpa-decode-f32').length).toBeGreaterThanOrEqual(3);
    expect(sdpa.map((c) => c.schedule['warps'])).toEqual(expect.arrayContaining([1, 2]));
    // Several splits, and 64 of them over 33 positions (all but one empty).
    expect(sdpa.map((c) => c.schedule['splits'])).toEqual(expect.arrayContaining([1, 4, 64]));
  });

  it('cover get-rows: every table type at every n_vocab, n_embd and n_rows together, 32 to 1024 threads', () => {
    for (const [id, block] of Object.entries(GET_ROWS_WIDTHS)) {
      const cases = casesOf(id);
      const has = (n_vocab: number, n_embd: number, n_rows: number) =>
        cases.some((c) => JSON.stringify(c.shape) === JSON.stringify({ n_vocab, n_embd, n_rows }));
      for (const nVocab of [1, 3, 256])
        for (const nEmbd of [block, 4096])
          for (const nRows of [1, 3])
            expect(has(nVocab, nEmbd, nRows), `${id} ${nVocab} x ${nEmbd}, ${nRows} rows`).toBe(
              true,
            );
      const sizes = cases.map((c) => c.schedule['workgroupSize'] ?? 256);
      expect(new Set(sizes)).toEqual(new Set([32, 256, 1024]));
      // Each case's ids name row 0 (when it has two rows) and the last row; one case names ids
      // past the table.
      const kernel = getKernel(id);
      for (const testCase of cases.filter((c) => c.family === undefined)) {
        const ids = [...(makeCaseInputs(kernel, testCase)['ids'] ?? [])];
        const nVocab = testCase.shape['n_vocab'] ?? 0;
        expect(ids, testCase.name).toContain(nVocab - 1);
        if (ids.length > 1) expect(ids, testCase.name).toContain(0);
        expect(ids.every((value) => value < nVocab)).toBe(true);
      }
      const outOfRange = cases.filter((c) => c.family === GET_ROWS_OUT_OF_RANGE);
      expect(outOfRange).toHaveLength(1);
      const [family] = outOfRange as [ExecutionCase];
      const ids = [...(makeCaseInputs(kernel, family)['ids'] ?? [])];
      expect(ids.filter((value) => value >= (family.shape['n_vocab'] ?? 0))).toHaveLength(2);
    }
  });

  it('cover kv-store on both caches: the first, a middle and the last row, and f16 ties', () => {
    for (const kernelId of ['kv-store', 'kv-store-f32']) {
      const cases = executionCasesFor('ptx-sim').filter((c) => c.kernelId === kernelId);
      const rows = cases.map((c) => [c.shape['pos'], c.shape['max_ctx']]);
      expect(rows).toEqual(
        expect.arrayContaining([
          [0, 64],
          [37, 64],
          [63, 64],
        ]),
      );
      expect(cases.map((c) => c.family)).toContain('f16-ties');
      // Each writes one row of its caches: the simulator's whole-buffer traffic check is waived.
      for (const c of cases) expect(c.partlyWritten).toEqual(['k_cache', 'v_cache']);
    }
  });

  it('cover rope-kv-store on both caches in both modes: the first, a middle and the last row, head_dim 4 to 128', () => {
    for (const kernelId of ['rope-kv-store', 'rope-kv-store-f32']) {
      const cases = executionCasesFor('webgpu').filter((c) => c.kernelId === kernelId);
      for (const neox of [0, 1]) {
        const rows = cases.filter((c) => c.shape['neox'] === neox).map((c) => c.shape['pos']);
        expect(rows).toEqual(expect.arrayContaining([0, 37]));
      }
      expect(cases.some((c) => c.shape['pos'] === (c.shape['max_ctx'] ?? 0) - 1)).toBe(true);
      expect(new Set(cases.map((c) => c.shape['head_dim']))).toEqual(new Set([4, 64, 80, 128]));
      for (const c of cases) {
        expect(c.partlyRead).toEqual(['cos_sin']);
        expect(c.partlyWritten).toEqual(['k_cache', 'v_cache']);
      }
    }
  });

  it('leave out of an engine only the cases too slow for it', () => {
    expect(executionCasesFor('webgpu')).toEqual(EXECUTION_CASES);
    for (const engine of ['interpreter', 'ptx-sim'] as const) {
      const names = executionCasesFor(engine).map((c) => c.name);
      const skipped = EXECUTION_CASES.filter((c) => !names.includes(c.name));
      expect(skipped.map((c) => [c.kernelId, c.shape])).toEqual([
        ['q8_0-gemv', { n_in: 8192, n_out: 1000 }],
        ['q4k-gemv', { n_in: 8192, n_out: 1000 }],
        ['q4k-swiglu-gemv', { n_in: 8192, n_out: 1000 }],
        ['q6k-gemv', { n_in: 8192, n_out: 1000 }],
        ['q6k-soa-gemv', { n_in: 8192, n_out: 1000 }],
        [
          'sdpa-decode',
          { n_head: 8, n_kv_head: 2, head_dim: 128, n_kv: 4096, max_ctx: 4096, window: 0 },
        ],
        ['add', { n: 65535 * 32 * 4 + 133 }],
        ['silu-mul', { n: 65535 * 32 * 4 + 133 }],
        ['argmax', { n: 2 ** 24 + 3 }],
      ]);
    }
  });

  it('cover rope: pos 0, 1, 17, 4095 in both modes, head_dim 64 and 128, heads 32/8 and 3/1, on every engine', () => {
    const cases = casesOf('rope');
    for (const engine of ['interpreter', 'webgpu', 'ptx-sim'] as const)
      expect(executionCasesFor(engine).filter((c) => c.kernelId === 'rope')).toEqual(cases);
    const has = (wanted: Readonly<Record<string, number>>): boolean =>
      cases.some((c) => Object.entries(wanted).every(([name, value]) => c.shape[name] === value));
    for (const neox of [0, 1]) {
      for (const pos of [1, 17, 4095])
        expect(has({ pos, neox }), `pos ${pos} neox ${neox}`).toBe(true);
      for (const headDim of [64, 128]) expect(has({ head_dim: headDim, neox })).toBe(true);
      expect(has({ n_head: 32, n_kv_head: 8, neox })).toBe(true);
      expect(has({ n_head: 3, n_kv_head: 1, neox })).toBe(true);
      // The last row of a full 4096-position table.
      expect(has({ pos: 4095, max_ctx: 4096, neox })).toBe(true);
    }
    expect(has({ pos: 0 })).toBe(true);
    for (const testCase of cases) expect(testCase.partlyRead).toEqual(['cos_sin']);
  });

  it('all resolve on both targets and name a catalog kernel', () => {
    for (const testCase of EXECUTION_CASES) {
      const kernel = getKernel(testCase.kernelId);
      for (const target of ['ptx', 'wgsl'] as const) {
        expect(() => resolveSchedule(kernel.spec, target, testCase.schedule)).not.toThrow();
      }
      expect(Object.keys(testCase.shape).sort()).toEqual([...kernel.shapeNames].sort());
    }
  });
});

describe('makeCaseInputs', () => {
  const rms = find(
    (c) => c.kernelId === 'rmsnorm' && c.shape['n_embd'] === 4096 && c.magnitude === 1e3,
  );

  it('is deterministic and gives every buffer its length', () => {
    const kernel = getKernel(rms.kernelId);
    const first = makeCaseInputs(kernel, rms);
    const second = makeCaseInputs(kernel, rms);
    expect(first).toEqual(second);
    expect(Object.keys(first).sort()).toEqual(['w', 'x', 'y']);
    const lengths = kernel.bufferLengths(rms.shape);
    for (const [name, data] of Object.entries(first)) expect(data.length).toBe(lengths[name]);
  });

  it('scales inputs by the case magnitude (weights by theirs) and zeroes outputs', () => {
    const buffers = makeCaseInputs(getKernel('rmsnorm'), rms);
    const largest = (data: ArrayLike<number> | undefined): number =>
      Array.from(data ?? []).reduce((max, value) => Math.max(max, Math.abs(value)), 0);
    expect(largest(buffers['x'])).toBeLessThanOrEqual(1e3);
    expect(largest(buffers['x'])).toBeGreaterThan(900);
    expect(largest(buffers['w'])).toBeLessThanOrEqual(1);
    expect(largest(buffers['w'])).toBeGreaterThan(0.9);
    expect(largest(buffers['y'])).toBe(0);
  });

  it('differs between seeds', () => {
    const kernel = getKernel(rms.kernelId);
    const other = makeCaseInputs(kernel, { ...rms, seed: rms.seed + 1 });
    expect(other['x']).not.toEqual(makeCaseInputs(kernel, rms)['x']);
  });

  it('zeroes exactly the requested rows of x', () => {
    const testCase = find((c) => c.zeroRows?.length === 2);
    const x = makeCaseInputs(getKernel('rmsnorm'), testCase)['x'] ?? new Float32Array();
    const width = testCase.shape['n_embd'] ?? 0;
    const rowIsZero = (row: number): boolean =>
      x.subarray(row * width, (row + 1) * width).every((value) => value === 0);
    expect([0, 1, 2].map(rowIsZero)).toEqual([true, false, true]);
  });

  it('rejects a case for another kernel and rows out of range', () => {
    expect(() => makeCaseInputs(getKernel('affine-f32'), rms)).toThrow(ForgeError);
    expect(() => makeCaseInputs(getKernel('rmsnorm'), { ...rms, zeroRows: [3] })).toThrow(
      /zero row 3/,
    );
  });
});

describe('makeCaseInputs for non-f32 buffers', () => {
  const probe: CatalogKernel = {
    spec: UNPACK_HALF_PROBE,
    shapeNames: ['n'],
    defaultShape: { n: 4 },
    params: (shape) => ({ n: shape['n'] ?? 0 }),
    bufferLengths: (shape) => ({ words: shape['n'] ?? 0, out: 2 * (shape['n'] ?? 0) }),
    outputs: ['out'],
    reference: () => ({}),
    tolerance: 0,
  };
  const testCase = { name: 'probe', kernelId: 'unpack-half-probe', schedule: {}, shape: { n: 4 } };

  it('needs the kernel to generate a u32 input, and checks what it generates', () => {
    const base = { ...testCase, seed: 3, magnitude: 1 };
    expect(() => makeCaseInputs(probe, base)).toThrow(/'words' holds u32/);
    const words = Uint32Array.of(1, 2, 3, 4);
    const inputs = makeCaseInputs({ ...probe, generateInput: () => words }, base);
    expect(inputs['words']).toBe(words);
    expect(inputs['out']).toEqual(new Float32Array(8));
    const short = { ...probe, generateInput: () => Uint32Array.of(1) };
    expect(() => makeCaseInputs(short, base)).toThrow(/gives 1 elements for 'words', not 4/);
  });
});

describe('checkCase', () => {
  // One case a kernel in `pnpm test`'s quick tier, every case in `pnpm test:full`.
  const checked = sampleForTier(EXECUTION_CASES, testTier(), (testCase) => testCase.kernelId);
  it.each(checked.map((testCase) => [testCase.name, testCase] as const))(
    'accepts the f32-rounded reference for %s',
    (_name, testCase) => {
      const kernel = getKernel(testCase.kernelId);
      const check = checkCase(kernel, testCase, perfectOutputs(testCase));
      expect(check.tolerance).toBe(kernel.tolerance);
      expect(check.nmse).toBeLessThan(1e-13);
    },
  );

  it('rejects a wrong element, a missing output and NaNs', () => {
    const testCase = find((c) => c.kernelId === 'affine-f32' && c.shape['n'] === 257);
    const kernel = getKernel(testCase.kernelId);
    const outputs = perfectOutputs(testCase);
    const y = outputs['y'] ?? new Float32Array();
    const original = y[100] ?? 0;
    y[100] = original + 1;
    const wrong = checkCase(kernel, testCase, outputs);
    expect(wrong.nmse).toBeGreaterThan(wrong.tolerance);
    expect(wrong.maxAbsError).toBeCloseTo(1, 5);
    y[100] = Number.NaN;
    expect(checkCase(kernel, testCase, outputs).maxAbsError).toBe(Infinity);
    expect(checkCase(kernel, testCase, outputs).nmse).toBe(Infinity);
    expect(checkCase(kernel, testCase, {}).nmse).toBe(Infinity);
    expect(checkCase(kernel, testCase, { y: y.subarray(1) }).nmse).toBe(Infinity);
  });

  it('rejects all-zero outputs', () => {
    const testCase = find((c) => c.kernelId === 'rmsnorm' && c.magnitude === 1e-3);
    const kernel = getKernel(testCase.kernelId);
    const zeros = makeCaseInputs(kernel, testCase);
    expect(checkCase(kernel, testCase, zeros).nmse).toBeGreaterThan(kernel.tolerance);
  });
});

describe('makeCaseInputs with an input family', () => {
  const windowed = find((c) => c.kernelId === 'sdpa-decode' && c.shape['window'] === 100);

  it("draws a named family through the kernel's generateFamily, hidden positions NaN", () => {
    const kernel = getKernel('sdpa-decode');
    const buffers = makeCaseInputs(kernel, windowed);
    expect(buffers).toEqual(makeCaseInputs(kernel, windowed));
    const lengths = kernel.bufferLengths(windowed.shape);
    for (const [name, data] of Object.entries(buffers)) expect(data.length).toBe(lengths[name]);
    // Position 0 lies before the window: its first K word holds two NaN halves.
    const word = buffers['k']?.[0] ?? 0;
    expect(word & 0x7c00).toBe(0x7c00);
    expect(word & 0x3ff).not.toBe(0);
    const reference = kernel.reference(buffers, kernel.params(windowed.shape))['out'];
    expect(Array.from(reference ?? []).every(Number.isFinite)).toBe(true);
  });

  it('rejects a family the kernel does not have, naming the known ones', () => {
    const kernel = getKernel('sdpa-decode');
    expect(() => makeCaseInputs(kernel, { ...windowed, family: 'zeros' })).toThrow(
      "has no input family 'zeros' (known: uniform, dominant, equal-scores, large-q)",
    );
    expect(() => makeCaseInputs(getKernel('rmsnorm'), { ...rmsCase(), family: 'uniform' })).toThrow(
      ForgeError,
    );
  });
});

function rmsCase(): ExecutionCase {
  return find((c) => c.kernelId === 'rmsnorm');
}

describe("pnpm test's quick tier", () => {
  it('keeps one case of every kernel an engine runs, at the default schedule where it has one', () => {
    for (const engine of ['interpreter', 'webgpu', 'ptx-sim'] as const) {
      const all = executionCasesFor(engine, 'full');
      const quick = executionCasesFor(engine, 'quick');
      const kernels = [...new Set(all.map((testCase) => testCase.kernelId))];
      expect(quick.map((testCase) => testCase.kernelId).sort()).toEqual(kernels.sort());
      for (const testCase of quick) {
        const atDefault = all.find(
          (other) =>
            other.kernelId === testCase.kernelId && Object.keys(other.schedule).length === 0,
        );
        expect(testCase).toBe(
          atDefault ?? all.find((other) => other.kernelId === testCase.kernelId),
        );
      }
    }
    expect(executionCasesFor('webgpu')).toEqual(executionCasesFor('webgpu', 'full'));
  });

  it('samples the first items of each group, preferred ones first, in their order', () => {
    const items = ['a1', 'b1', 'a2', 'b2*', 'a3*', 'c1'];
    const group = (item: string) => item.charAt(0);
    const preferred = (item: string) => item.endsWith('*');
    expect(sampleForTier(items, 'full', group, { preferred })).toEqual(items);
    expect(sampleForTier(items, 'quick', group, { preferred })).toEqual(['b2*', 'a3*', 'c1']);
    expect(sampleForTier(items, 'quick', group, { perGroup: 2 })).toEqual([
      'a1',
      'b1',
      'a2',
      'b2*',
      'c1',
    ]);
  });
});
