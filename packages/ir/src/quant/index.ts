export * from './formats.js';
export * from './repack.js';
export {
  Q4_0_BLOCK_BYTES,
  Q4_0_BLOCK_SIZE,
  dequantizeBlockQ4_0,
  quantizeBlockQ4_0,
} from './q4-0.js';
export {
  Q8_0_BLOCK_BYTES,
  Q8_0_BLOCK_SIZE,
  dequantizeBlockQ8_0,
  quantizeBlockQ8_0,
} from './q8-0.js';
export {
  Q4_K_BLOCK_BYTES,
  Q4_K_BLOCK_SIZE,
  dequantizeBlockQ4_K,
  q4kScaleMin,
  quantizeBlockQ4_K,
} from './q4-k.js';
export {
  Q6_K_BLOCK_BYTES,
  Q6_K_BLOCK_SIZE,
  dequantizeBlockQ6_K,
  quantizeBlockQ6_K,
} from './q6-k.js';
export { nearestInt } from './scalar.js';
export { packWords, unpackWords } from './words.js';
