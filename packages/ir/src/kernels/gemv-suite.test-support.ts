// Shared by the tests of the gemv kernels: the oracle and shape tests of all four, and the layout
// and generator tests of those on native K-quant rows (q4k-gemv, q6k-gemv).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { interpret } from '../interpreter/run.js';
import { QUANT_FORMATS, dequantize, type QuantType } from '../quant/formats.js';
import { packWords, unpackWords } from '../quant/words.js';
import { resolveSchedule } from '../schedule.js';
import { makeCaseInputs } from './case-inputs.js';
import { Rng } from './random.js';
import { normalizedMse } from './catalog-kernel.js';
import type { CatalogKernel } from './catalog-kernel.js';

const ORACLE = new URL('../../../../fixtures/ggml/', import.meta.url);
const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const floats = (name: string): Float32Array => {
  const data = bytes(name);
  return new Float32Array(data.buffer, data.byteOffset, data.byteLength / 4);
};

/** ggml's 64 x 512 matrix with prefix `Q4_K` etc. in a kernel's layout, its x and its exact y. */
export function gemvOracle(
  prefix: string,
  layout: (native: Uint8Array) => Uint8Array = (native) => native,
) {
  const shape = { n_in: 512, n_out: 64 };
  const w = layout(bytes(`${prefix}_64x512.w.bin`));
  return {
    shape,
    w,
    buffers: { w: packWords(w), x: floats(`${prefix}_64x512.x.f32`), y: new Float32Array(64) },
    y: floats(`${prefix}_64x512.y.f32`),
  };
}

export interface GemvSuite {
  readonly kernel: CatalogKernel;
  readonly type: QuantType;
  /** Oracle file prefix, `Q4_K`. */
  readonly prefix: string;
  /** The weight buffer's bytes from native rows, for repacked layouts. */
  readonly layout?: { readonly fromNative: (native: Uint8Array) => Uint8Array };
  /** The float64 reference rounds to ggml's y exactly (else within 1e-12 NMSE). */
  readonly exactReference?: boolean;
}

/** The oracle, grid-stride, shape-check and conditioning tests every gemv kernel gets. */
export function describeGemv({ kernel, type, prefix, layout, exactReference }: GemvSuite): void {
  const oracle = () => gemvOracle(prefix, layout?.fromNative);
  const block = QUANT_FORMATS[type].blockSize;

  describe(kernel.spec.id, () => {
    it("its float64 reference matches ggml's exact y on the oracle", () => {
      const { shape, buffers, y } = oracle();
      const reference = Float32Array.from(
        kernel.reference(buffers, kernel.params(shape))['y'] ?? [],
      );
      if (exactReference === true) expect(reference).toEqual(y);
      else expect(normalizedMse(reference, y)).toBeLessThanOrEqual(1e-12);
    });

    it("the interpreter matches ggml's exact y on the oracle within 1e-10 NMSE", () => {
      const { shape, buffers, y } = oracle();
      const schedule = resolveSchedule(kernel.spec, 'ptx', {});
      interpret(kernel.spec, { schedule, params: kernel.params(shape), buffers });
      expect(normalizedMse(buffers.y, y)).toBeLessThanOrEqual(kernel.tolerance);
    });

    it('covers all rows through its grid-stride loop when the grid is smaller', () => {
      const { shape, buffers, y } = oracle();
      // Two rows a warp where the knob exists (row-streaming kernels take two together anyway).
      const knobs = kernel.spec.schedule.some(({ name }) => name === 'rowsPerWarp');
      const schedule = resolveSchedule(kernel.spec, 'ptx', knobs ? { rowsPerWarp: 2 } : {});
      // A kernel that quantizes x first strides its rows in its last dispatch.
      const grid = [3, 1, 1] as const;
      const dispatches = kernel.spec.stages === undefined ? undefined : [undefined, grid];
      const where = dispatches === undefined ? { grid } : { dispatchGrids: dispatches };
      interpret(kernel.spec, { schedule, params: kernel.params(shape), buffers, ...where });
      expect(normalizedMse(buffers.y, y)).toBeLessThanOrEqual(kernel.tolerance);
    });

    it.each([
      [
        { n_in: 100, n_out: 3 },
        'n_in',
        `100 is not a multiple of ${block}, the ${type} block size`,
      ],
      [{ n_in: 0, n_out: 3 }, 'n_in', `0 is not a multiple of ${block}, the ${type} block size`],
      [{ n_in: block, n_out: 0 }, 'n_out', '0 is not at least 1'],
      [{ n_in: 2 ** 28, n_out: 1000 }, 'n_out', /exceed 32-bit byte offsets/],
    ])('rejects the shape %j naming %s', (shape, path, message) => {
      try {
        kernel.checkShape?.(shape);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        const [issue] = (error as ValidationError).issues;
        expect(issue?.path).toBe(path);
        expect(issue?.message).toMatch(message);
      }
      const testCase = { name: 'bad', kernelId: kernel.spec.id, schedule: {}, shape, seed: 1 };
      expect(() => makeCaseInputs(kernel, { ...testCase, magnitude: 1 })).toThrow(ValidationError);
    });
  });
}

export interface NativeGemvExpectations {
  readonly kernel: CatalogKernel;
  readonly type: QuantType;
  /** Oracle file prefix, `Q4_K`. */
  readonly prefix: string;
  readonly blocksTitle: string;
  /** Payload bytes and padded words of a 3 x 256 matrix. */
  readonly expected: { readonly bytes: number; readonly words: number };
}

/** describeGemv plus the layout and generator tests of a gemv kernel on native K-quant rows. */
export function describeNativeGemv({
  kernel,
  type,
  prefix,
  blocksTitle,
  expected,
}: NativeGemvExpectations): void {
  describeGemv({ kernel, type, prefix });

  describe(kernel.spec.id, () => {
    it(blocksTitle, () => {
      const { w, buffers } = gemvOracle(prefix);
      expect(buffers.w.length).toBe(kernel.bufferLengths({ n_in: 512, n_out: 64 })['w']);
      expect(buffers.w.length * 4).toBe(w.length);
      expect(kernel.weights?.bytes({ n_in: 256, n_out: 3 })).toBe(expected.bytes);
      expect(kernel.bufferLengths({ n_in: 256, n_out: 3 })['w']).toBe(expected.words);
    });

    it('generates random blocks with |w| <= magnitude, deterministically', () => {
      const shape = { n_in: 256, n_out: 3 };
      const request = { buffer: 'w', length: expected.words, shape, magnitude: 2 };
      const words = kernel.generateInput?.({ ...request, rng: new Rng(5) }) ?? new Uint32Array();
      expect(words).toEqual(kernel.generateInput?.({ ...request, rng: new Rng(5) }));
      expect(words.length).toBe(expected.words);
      const values = dequantize(type, unpackWords(words, expected.bytes), 3, 256);
      const largest = values.reduce((max, value) => Math.max(max, Math.abs(value)), 0);
      expect(largest).toBeLessThanOrEqual(2);
      expect(largest).toBeGreaterThan(0.5);
      expect(kernel.generateInput?.({ ...request, buffer: 'x', rng: new Rng(5) })).toBeUndefined();
    });
  });
}
