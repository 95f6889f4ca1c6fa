import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { dequantize, quantizedBytes } from './formats.js';
import { REPACK_TYPES, repack, repackedLayout, unpack } from './repack.js';

const ORACLE = new URL('../../../../fixtures/ggml/', import.meta.url);
const read = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
function randomBytes(length: number, seed: number): Uint8Array {
  let s = seed || 1;
  return Uint8Array.from({ length }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s & 0xff;
  });
}

describe('repacked layouts', () => {
  it('gives the documented offsets and sizes for 64 × 512', () => {
    const q6 = repackedLayout('q6_K', 64, 512);
    expect(q6.arrays.map((a) => [a.name, a.offset, a.bytes, a.paddedBytes])).toEqual([
      ['ql', 0, 256, 256],
      ['qh', 256, 128, 128],
      ['scales', 384, 32, 32],
      ['d', 416, 4, 32],
    ]);
    expect([q6.rowStride, q6.totalBytes, q6.nativeBytes, q6.paddingBytes]).toEqual([
      448, 28672, 26880, 1792,
    ]);
    const q4 = repackedLayout('q4_K', 64, 512);
    expect(q4.arrays.map((a) => [a.name, a.offset, a.bytes, a.paddedBytes])).toEqual([
      ['qs', 0, 256, 256],
      ['meta', 256, 32, 32],
    ]);
    expect([q4.rowStride, q4.totalBytes, q4.paddingBytes]).toEqual([288, 18432, 0]);
  });

  it('follows the closed forms for every width: aligned arrays and rows, padding < 32 per row', () => {
    for (let nb = 1; nb <= 40; nb++) {
      const q6 = repackedLayout('q6_K', 3, 256 * nb);
      expect(q6.rowStride).toBe(32 * Math.ceil((210 * nb) / 32));
      expect(q6.arrays.map((a) => a.offset)).toEqual([0, 128 * nb, 192 * nb, 208 * nb]);
      const q4 = repackedLayout('q4_K', 3, 256 * nb);
      expect(q4.rowStride).toBe(144 * nb + (nb % 2) * 16);
      expect(q4.arrays.map((a) => a.offset)).toEqual([0, 128 * nb]);
      for (const layout of [q4, q6]) {
        expect(layout.rowStride % 32).toBe(0);
        expect(layout.paddingBytes).toBeLessThan(3 * 32);
        let offset = 0;
        for (const array of layout.arrays) {
          expect(array.offset % 16).toBe(0);
          expect(array.offset).toBe(offset);
          expect(array.paddedBytes - array.bytes).toBeLessThan(32);
          offset += array.paddedBytes;
        }
        expect(offset).toBe(layout.rowStride);
      }
    }
    expect(repackedLayout('q6_K', 1, 4096).paddingBytes).toBe(0);
    expect(repackedLayout('q4_K', 1, 11008).paddingBytes).toBe(16);
  });

  it('rejects formats without a repacked layout and bad shapes', () => {
    expect(() => repackedLayout('q8_0', 1, 32)).toThrow(
      'type: repacked layouts exist for q4_K and q6_K only, got q8_0',
    );
    expect(() => repackedLayout('q6_K', 1, 300)).toThrow(ValidationError);
  });
});

describe.each(REPACK_TYPES)('repack / unpack %s', (type) => {
  const name = type === 'q6_K' ? 'Q6_K' : 'Q4_K';
  const native = read(`${name}_64x512.w.bin`);

  it('round-trips the oracle bytes exactly', () => {
    const packed = repack(type, native, 64, 512);
    expect(packed.length).toBe(repackedLayout(type, 64, 512).totalBytes);
    expect(unpack(type, packed, 64, 512)).toEqual(native);
  });

  it('puts every field of every block where the layout says, with zero padding', () => {
    const layout = repackedLayout(type, 64, 512);
    const packed = repack(type, native, 64, 512);
    const blockBytes = type === 'q6_K' ? 210 : 144;
    const covered = new Uint8Array(packed.length);
    for (let r = 0; r < 64; r++) {
      for (const array of layout.arrays) {
        for (let b = 0; b < layout.blocksPerRow; b++) {
          const at = r * layout.rowStride + array.offset + b * array.bytesPerBlock;
          const from = (r * layout.blocksPerRow + b) * blockBytes + array.nativeOffset;
          expect(packed.subarray(at, at + array.bytesPerBlock)).toEqual(
            native.subarray(from, from + array.bytesPerBlock),
          );
          covered.fill(1, at, at + array.bytesPerBlock);
        }
      }
    }
    expect(packed.every((byte, i) => covered[i] === 1 || byte === 0)).toBe(true);
    expect(covered.reduce((sum, c) => sum + c, 0)).toBe(native.length);
  });

  it('round-trips random blocks of every width up to 17 blocks', () => {
    for (let nb = 1; nb <= 17; nb++) {
      const rows = 1 + (nb % 4);
      const bytes = randomBytes(quantizedBytes(type, rows, 256 * nb), nb);
      const packed = repack(type, bytes, rows, 256 * nb);
      expect(unpack(type, packed, rows, 256 * nb)).toEqual(bytes);
      // Decoding through the round trip gives the same floats, NaNs included.
      expect(dequantize(type, unpack(type, packed, rows, 256 * nb), rows, 256 * nb)).toEqual(
        dequantize(type, bytes, rows, 256 * nb),
      );
    }
  });

  it('rejects inputs of the wrong size, naming bytes and both sizes', () => {
    expect(() => repack(type, native.subarray(1), 64, 512)).toThrow(
      `bytes: expected ${native.length} bytes (64 native ${type} rows of 512 values), got ${native.length - 1}`,
    );
    const total = repackedLayout(type, 64, 512).totalBytes;
    expect(() => unpack(type, new Uint8Array(total + 1), 64, 512)).toThrow(
      `bytes: expected ${total} bytes (64 repacked ${type} rows of 512 values), got ${total + 1}`,
    );
  });
});
