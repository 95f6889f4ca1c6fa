/**
 * `@forge/ir/gguf`: GGUF's quantization formats (q4_0, q8_0, q4_K, q6_K) as bit-exact codecs of
 * ggml's reference (quantize and dequantize, by block and by matrix), their format table, the
 * repacked layouts some kernels read, and the packing of bytes into u32 words.
 *
 * @module @forge/ir/gguf
 */
export * from './quant/formats.js';
export * from './quant/repack.js';
export {
  Q4_0_BLOCK_BYTES,
  Q4_0_BLOCK_SIZE,
  dequantizeBlockQ4_0,
  quantizeBlockQ4_0,
} from './quant/q4-0.js';
export {
  Q8_0_BLOCK_BYTES,
  Q8_0_BLOCK_SIZE,
  dequantizeBlockQ8_0,
  quantizeBlockQ8_0,
} from './quant/q8-0.js';
export {
  Q4_K_BLOCK_BYTES,
  Q4_K_BLOCK_SIZE,
  dequantizeBlockQ4_K,
  q4kScaleMin,
  quantizeBlockQ4_K,
} from './quant/q4-k.js';
export {
  Q6_K_BLOCK_BYTES,
  Q6_K_BLOCK_SIZE,
  dequantizeBlockQ6_K,
  quantizeBlockQ6_K,
} from './quant/q6-k.js';
export { nearestInt } from './quant/scalar.js';
export { packWords, unpackWords } from './quant/words.js';
