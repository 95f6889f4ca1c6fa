import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import type { ElementArray } from '../interpreter/memory.js';
import { packWords } from '../quant/words.js';
import { resolveSchedule } from '../schedule.js';
import { makeCaseInputs } from './case-inputs.js';
import { normalizedMse, type CatalogKernel, type Shape } from './catalog-kernel.js';
import { getKernel } from './catalog.js';
import {
  GET_ROWS_OUT_OF_RANGE,
  getRowsF16,
  getRowsF32,
  getRowsQ4k,
  getRowsQ6k,
  getRowsQ8_0,
} from './get-rows-catalog.js';
import { packF16Words } from './half-words.js';
import { seedFromString } from './random.js';

const ORACLE = new URL('../../../../fixtures/ggml/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const floats = (name: string): Float32Array => {
  const data = bytes(name);
  return new Float32Array(data.buffer, data.byteOffset, data.byteLength / 4);
};

function run(
  kernel: CatalogKernel,
  shape: Shape,
  buffers: Record<string, ElementArray>,
  options: { grid?: [number, number, number]; schedule?: Record<string, number> } = {},
) {
  const schedule = resolveSchedule(kernel.spec, 'ptx', options.schedule ?? {});
  const params = kernel.params(shape);
  interpret(kernel.spec, { schedule, params, buffers, ...(options.grid ? { grid: options.grid } : {}) }); // prettier-ignore
  return buffers['out'] as Float32Array;
}

// ggml's 64 x 512 oracle matrices as embedding tables: rows 0, 17 and 63 against ggml's floats.
const ORACLES = [
  ['Q8_0', getRowsQ8_0],
  ['Q4_K', getRowsQ4k],
  ['Q6_K', getRowsQ6k],
] as const;

describe.each(ORACLES)('get-rows on %s, ggml’s oracle', (prefix, kernel) => {
  const shape = { n_vocab: 64, n_embd: 512, n_rows: 3 };
  const ids = Uint32Array.of(17, 63, 0);
  const table = () => packWords(bytes(`${prefix}_64x512.w.bin`));
  const expected = () => {
    const deq = floats(`${prefix}_64x512.deq.f32`);
    return Float32Array.from([...ids].flatMap((id) => [...deq.subarray(512 * id, 512 * id + 512)]));
  };

  it('the reference gives ggml’s dequantized rows exactly', () => {
    const out = kernel.reference({ table: table(), ids }, kernel.params(shape))['out'];
    expect(Float32Array.from(out ?? [])).toEqual(expected());
  });

  it('the interpreter gives them bit for bit', () => {
    const out = run(kernel, shape, { table: table(), ids, out: new Float32Array(3 * 512) });
    expect(out).toEqual(expected());
  });
});

describe('get-rows', () => {
  it('f32 and f16 rows bit for bit, an odd n_embd starting rows mid-word', () => {
    const values = Float32Array.from({ length: 5 * 7 }, (_, i) => (i - 17) / 8);
    const shape = { n_vocab: 5, n_embd: 7, n_rows: 3 };
    const ids = Uint32Array.of(3, 4, 0);
    const want = Float32Array.from([...ids].flatMap((id) => [...values.subarray(7 * id, 7 * id + 7)])); // prettier-ignore
    for (const [kernel, table] of [
      [getRowsF32, values.slice()],
      [getRowsF16, packF16Words(values)],
    ] as const) {
      const out = run(kernel, shape, { table, ids, out: new Float32Array(21) });
      expect(out, kernel.spec.id).toEqual(want);
    }
  });

  it('writes a row of zeros for an id at or past n_vocab, reading no row past the table', () => {
    const shape = { n_vocab: 3, n_embd: 256, n_rows: 4 };
    const testCase = {
      name: 'q6k out of range',
      kernelId: 'get-rows-q6k',
      schedule: {},
      shape,
      seed: seedFromString('q6k out of range'),
      magnitude: 1,
      family: GET_ROWS_OUT_OF_RANGE,
    };
    const buffers = makeCaseInputs(getRowsQ6k, testCase);
    expect([...(buffers['ids'] ?? [])]).toEqual([3, 2, 2 ** 32 - 1, 0]);
    // NaN outputs beforehand: a row left unwritten would show.
    buffers['out']?.fill(Number.NaN);
    const out = run(getRowsQ6k, shape, buffers);
    const row = (r: number) => [...out.subarray(256 * r, 256 * r + 256)];
    expect(row(0).every((v) => v === 0)).toBe(true);
    expect(row(2).every((v) => v === 0)).toBe(true);
    expect(row(1).some((v) => v !== 0)).toBe(true);
    const reference = getRowsQ6k.reference(buffers, getRowsQ6k.params(shape))['out'] ?? [];
    expect(normalizedMse(out, reference)).toBe(0);
  });

  it('covers every value and row through its grid-stride loops when the grid is smaller', () => {
    const shape = { n_vocab: 7, n_embd: 4096, n_rows: 3 };
    const testCase = {
      name: 'q4k grid stride',
      kernelId: 'get-rows-q4k',
      schedule: { workgroupSize: 32 },
      shape,
      seed: seedFromString('q4k grid stride'),
      magnitude: 1,
    };
    const buffers = makeCaseInputs(getRowsQ4k, testCase);
    buffers['out']?.fill(Number.NaN);
    const out = run(getRowsQ4k, shape, buffers, { grid: [5, 2, 1], schedule: { workgroupSize: 32 } }); // prettier-ignore
    const reference = getRowsQ4k.reference(buffers, getRowsQ4k.params(shape))['out'] ?? [];
    expect(normalizedMse(out, reference)).toBe(0);
  });

  it.each([
    ['get-rows-q8_0', { n_vocab: 4, n_embd: 48, n_rows: 1 }, 'n_embd', 'not a multiple of 32'],
    ['get-rows-q4k', { n_vocab: 4, n_embd: 128, n_rows: 1 }, 'n_embd', 'q4_K block size'],
    ['get-rows-q6k', { n_vocab: 4, n_embd: 0, n_rows: 1 }, 'n_embd', 'not a multiple of 256'],
    ['get-rows-f16', { n_vocab: 0, n_embd: 8, n_rows: 1 }, 'n_vocab', 'not at least 1'],
    ['get-rows-f32', { n_vocab: 4, n_embd: 8, n_rows: 0 }, 'n_rows', 'not at least 1'],
    ['get-rows-f32', { n_vocab: 2 ** 20, n_embd: 2 ** 10, n_rows: 1 }, 'n_vocab', '32-bit'],
  ])('%s rejects %j naming %s', (id, shape, path, message) => {
    let error: unknown;
    try {
      getKernel(id).checkShape?.(shape);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toBe(path);
    expect((error as ValidationError).message).toContain(message);
  });

  it('holds tables as whole u32 words and describes their files by type, payload unpadded', () => {
    const shape = { n_vocab: 3, n_embd: 32, n_rows: 1 };
    expect(getRowsQ8_0.bufferLengths(shape)['table']).toBe(26);
    expect(getRowsQ8_0.describeInput?.('table', shape)).toBe(
      '[n_vocab 3][n_embd 32] native q8_0 blocks, 102 bytes zero-padded to whole u32 words',
    );
    expect(getRowsQ4k.describeInput?.('table', { ...shape, n_embd: 256 })).toContain('q4_K blocks, 432 bytes'); // prettier-ignore
    expect(getRowsQ6k.describeInput?.('table', { ...shape, n_embd: 256 })).toContain('q6_K blocks, 630 bytes'); // prettier-ignore
    expect(getRowsF16.describeInput?.('table', { ...shape, n_embd: 7 })).toContain('halves, little-endian, 42 bytes zero-padded'); // prettier-ignore
    expect(getRowsF16.bufferLengths({ ...shape, n_embd: 7 })['table']).toBe(11);
    expect(getRowsF32.describeInput?.('table', shape)).toBeUndefined();
    expect(getRowsQ8_0.describeInput?.('ids', shape)).toBeUndefined();
    // A lookup streams n_rows rows, not the table: no kernel offers it as a weight stream.
    for (const kernel of [getRowsF32, getRowsF16, getRowsQ8_0, getRowsQ4k, getRowsQ6k])
      expect(kernel.weights).toBeUndefined();
  });
});
