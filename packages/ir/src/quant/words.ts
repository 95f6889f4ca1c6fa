// Quantized matrices travel to kernels as u32 words: WGSL storage has no byte or (without the f16
// feature) half type, so a kernel reads whole little-endian words and picks bytes out of them.

/** `bytes` packed little-endian into u32 words, the last word zero-padded. */
export function packWords(bytes: Uint8Array): Uint32Array {
  const words = new Uint32Array(Math.ceil(bytes.length / 4));
  for (let index = 0; index < bytes.length; index++)
    words[index >>> 2] =
      ((words[index >>> 2] ?? 0) | ((bytes[index] ?? 0) << (8 * (index & 3)))) >>> 0;
  return words;
}

/** The first `byteLength` bytes of little-endian u32 `words` (any array-like, e.g. a copy). */
export function unpackWords(words: ArrayLike<number>, byteLength: number): Uint8Array {
  if (byteLength > 4 * words.length || byteLength < 0)
    throw new RangeError(`unpackWords: ${byteLength} bytes do not fit ${words.length} words`);
  const bytes = new Uint8Array(byteLength);
  for (let index = 0; index < byteLength; index++)
    bytes[index] = ((words[index >>> 2] ?? 0) >>> (8 * (index & 3))) & 0xff;
  return bytes;
}
