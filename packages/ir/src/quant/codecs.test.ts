import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { f16FromBits, roundToF16 } from '../f16.js';
import {
  QUANT_FORMATS,
  QUANT_TYPES,
  dequantize,
  dequantizeRow,
  parseQuantType,
  quantFormat,
  quantize,
  quantizeRow,
  quantizedBytes,
  quantizedRowBytes,
  type QuantType,
} from './formats.js';
import { nearestInt, roundAwayFromZero } from './scalar.js';

// ggml's vectors, kept in the repository with their provenance (fixtures/ggml/README.md).
const ORACLE = new URL('../../../../fixtures/ggml/', import.meta.url);
const read = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const floats = (name: string): Float32Array => {
  const bytes = read(name);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(4 * i, true));
};

const ORACLE_NAME: Record<QuantType, string> = {
  q4_0: 'Q4_0',
  q8_0: 'Q8_0',
  q4_K: 'Q4_K',
  q6_K: 'Q6_K',
};
const ROWS = 64;
const COLS = 512;

/** Elements whose float32 bits differ, and the largest difference in units in the last place. */
function bitDifferences(
  actual: Float32Array,
  expected: Float32Array,
): { count: number; ulps: number } {
  const a = new Int32Array(actual.buffer, actual.byteOffset, actual.length);
  const b = new Int32Array(expected.buffer, expected.byteOffset, expected.length);
  let count = 0;
  let ulps = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    count++;
    ulps = Math.max(ulps, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  }
  return { count, ulps };
}

function firstByteDifference(actual: Uint8Array, expected: Uint8Array): string {
  const i = actual.findIndex((byte, k) => byte !== expected[k]);
  return i < 0 ? 'none' : `byte ${i}: ${actual[i]} vs ggml ${expected[i]}`;
}

describe('codecs against ggml (fixtures/ggml, 64 × 512)', () => {
  const src = floats('src_64x512.w.f32');

  describe.each(QUANT_TYPES)('%s', (type) => {
    const blocks = read(`${ORACLE_NAME[type]}_64x512.w.bin`);
    const deq = floats(`${ORACLE_NAME[type]}_64x512.deq.f32`);

    it('dequantizes ggml blocks to ggml floats bit for bit', () => {
      // Q4_K may differ by 1 ulp where a decoder fuses multiply-add; ours does not, so 0 differ.
      expect(bitDifferences(dequantize(type, blocks, ROWS, COLS), deq)).toEqual({
        count: 0,
        ulps: 0,
      });
    });

    it('quantizes the source to ggml bytes byte for byte', () => {
      const ours = quantize(type, src, ROWS, COLS);
      expect(ours.length).toBe(blocks.length);
      expect(firstByteDifference(ours, blocks)).toBe('none');
    });

    it('codes single rows like the matrix', () => {
      const rowBytes = quantizedRowBytes(type, COLS);
      for (const r of [0, 5, 63]) {
        const row = blocks.subarray(r * rowBytes, (r + 1) * rowBytes);
        expect(dequantizeRow(type, row, COLS)).toEqual(deq.subarray(r * COLS, (r + 1) * COLS));
        expect(quantizeRow(type, src.subarray(r * COLS, (r + 1) * COLS), COLS)).toEqual(row);
      }
    });
  });
});

describe('format table and size checks', () => {
  it('has ggml block sizes, block bytes and type ids', () => {
    expect(
      QUANT_TYPES.map((type) => {
        const f = QUANT_FORMATS[type];
        return [f.type, f.blockSize, f.blockBytes, f.ggmlTypeId];
      }),
    ).toEqual([
      ['q4_0', 32, 18, 2],
      ['q8_0', 32, 34, 8],
      ['q4_K', 256, 144, 12],
      ['q6_K', 256, 210, 14],
    ]);
    expect(quantizedBytes('q6_K', 64, 512)).toBe(26880);
    expect(quantizedRowBytes('q8_0', 512)).toBe(544);
  });

  it('matches type names case-insensitively and rejects unknown ones at path type', () => {
    expect(parseQuantType('Q4_K')).toBe('q4_K');
    expect(parseQuantType('q6_k')).toBe('q6_K');
    expect(parseQuantType('q5_K')).toBeUndefined();
    expect(() => quantFormat('q5_K')).toThrow(/type: unknown quant type 'q5_K' \(known: q4_0/);
  });

  function issue(run: () => unknown): { path: string; message: string } {
    try {
      run();
    } catch (error) {
      if (error instanceof ValidationError) return { path: error.path, message: error.message };
      throw error;
    }
    throw new Error('expected a ValidationError');
  }

  it('rejects cols that are not whole blocks, naming cols and the block size', () => {
    expect(issue(() => quantize('q4_K', new Float32Array(500), 1, 500))).toEqual({
      path: 'cols',
      message: 'cols: expected a multiple of 256 (the q4_K block size), got 500',
    });
    expect(issue(() => dequantize('q8_0', new Uint8Array(34), 1, 33)).path).toBe('cols');
    expect(issue(() => quantize('q4_0', new Float32Array(32), -1, 32)).path).toBe('rows');
    expect(issue(() => quantize('q4_0', new Float32Array(32), 1.5, 32)).path).toBe('rows');
  });

  it('rejects byte and value counts that do not match, giving expected and actual', () => {
    expect(issue(() => dequantize('q6_K', new Uint8Array(419), 1, 512))).toEqual({
      path: 'bytes',
      message: 'bytes: expected 420 bytes (1 rows × 2 blocks × 210 bytes for q6_K), got 419',
    });
    expect(issue(() => quantize('q8_0', new Float32Array(63), 2, 32))).toEqual({
      path: 'values',
      message: 'values: expected 64 values (2 rows × 32 cols), got 63',
    });
  });

  it('handles empty matrices', () => {
    expect(quantize('q4_K', new Float32Array(0), 0, 256).length).toBe(0);
    expect(dequantize('q6_K', new Uint8Array(0), 3, 0).length).toBe(0);
  });
});

describe('ggml scalar helpers', () => {
  it('nearestInt rounds half to even, like the float magic-number trick', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999998, -7.5].map(nearestInt)).toEqual([
      0, 2, 2, 0, -2, 2, -8,
    ]);
  });

  it('roundAwayFromZero is C roundf', () => {
    expect([0.5, 1.5, 2.5, -0.5, -2.5, -2.4].map(roundAwayFromZero)).toEqual([1, 2, 3, -1, -3, -2]);
  });

  it('quantizes special blocks as ggml does', () => {
    // All zeros decode to zeros (Q4_0's d = 0 / -8 is -0, as in ggml, so some are -0).
    for (const type of QUANT_TYPES) {
      const size = QUANT_FORMATS[type].blockSize;
      const back = dequantize(type, quantize(type, new Float32Array(size), 1, size), 1, size);
      expect(back.every((v) => v === 0)).toBe(true);
    }
    // Q8_0: d = max|x| / 127 (as f16) and every error within half a step.
    const ramp = Float32Array.from({ length: 32 }, (_, i) => i - 16);
    const blocks = quantize('q8_0', ramp, 1, 32);
    const d = f16FromBits((blocks[0] ?? 0) | ((blocks[1] ?? 0) << 8));
    expect(d).toBe(roundToF16(16 / 127));
    const back = dequantize('q8_0', blocks, 1, 32);
    expect(Math.max(...ramp.map((v, i) => Math.abs(v - (back[i] ?? 0))))).toBeLessThanOrEqual(
      d / 2,
    );
  });
});
