// f16 arrays travel to kernels as u32 words: WGSL without the f16 feature has no half type, so a
// kernel reads whole little-endian words and unpacks element 2i from the low half, 2i+1 the high.
import { ValidationError } from '../errors.js';
import { f16Bits, f16FromBits } from '../f16.js';

/**
 * `values` rounded to the nearest f16 (through f32, ties to even) and packed two a u32 word,
 * little-endian: element 2i in the low half of word i; an odd count leaves the last high half zero.
 */
export function packF16Words(values: ArrayLike<number>): Uint32Array {
  const words = new Uint32Array(Math.ceil(values.length / 2));
  for (let index = 0; index < values.length; index++) {
    const bits = f16Bits(values[index] ?? 0);
    words[index >>> 1] = ((words[index >>> 1] ?? 0) | (bits << (16 * (index & 1)))) >>> 0;
  }
  return words;
}

/** The f16 bit patterns of the first `count` halves of `words` (element 2i the low half of word i). */
export function f16BitsFromWords(words: ArrayLike<number>, count: number): Uint16Array {
  if (!Number.isInteger(count) || count < 0 || count > 2 * words.length)
    throw new ValidationError([
      { path: 'count', message: `${count} halves do not fit ${words.length} words` },
    ]);
  const bits = new Uint16Array(count);
  for (let index = 0; index < count; index++)
    bits[index] = ((words[index >>> 1] ?? 0) >>> (16 * (index & 1))) & 0xffff;
  return bits;
}

/** The exact values (as doubles) of the first `count` halves packed in `words`. */
export function unpackF16Words(words: ArrayLike<number>, count: number): Float64Array {
  const values = new Float64Array(count);
  f16BitsFromWords(words, count).forEach((bits, index) => (values[index] = f16FromBits(bits)));
  return values;
}
