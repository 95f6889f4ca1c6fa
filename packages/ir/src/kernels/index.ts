/**
 * `@forge/ir/kernels`: the catalog of reference kernels, each with its float64 reference, shapes
 * and input generators, and the seeded inputs (`makeCaseInputs`) and checks (`compareWithReference`)
 * that `forge run` and every engine's tests use. Importing it builds the small kernels' specs; decode
 * attention, the mat-vecs, get-rows and argmax are built the first time they are read (`lazyKernel`).
 *
 * @module @forge/ir/kernels
 */
export * from './catalog-kernel.js';
export * from './catalog.js';
export { affineF32 } from './affine-f32.js';
export { addRmsnorm, rmsnorm } from './rmsnorm.js';
export { addRmsnormQuantize } from './rmsnorm-quantize.js';
export { q8_0Gemv } from './q8-0-gemv.js';
export { q4kGemv, q4kSwigluGemv } from './q4k-gemv.js';
export { q6kGemv } from './q6k-gemv.js';
export { q6kSoaGemv } from './q6k-soa-gemv.js';
export * from './case-inputs.js';
export * from './random.js';
export * from './sdpa-shape.js';
export * from './sdpa-reference.js';
export * from './sdpa-inputs.js';
export * from './half-words.js';
export * from './sdpa-catalog.js';
export { sdpaDecode, sdpaDecodeF32, sdpaDecodeQuantize } from './sdpa-decode.js';
export { wmmaGemv, WMMA_MAX_COLS } from './wmma-gemv-catalog.js';
export { q4kSoaWmma } from './q4k-soa-wmma-catalog.js';
export { rope, ROPE_SHAPE_NAMES, checkRopeShape } from './rope.js';
export { ropeTable, ROPE_FREQ_BASE } from './rope-table.js';
export { ropeKvStore, ropeKvStoreF32, ropeKvStoreShapeIssues } from './rope-kv-store.js';
export * from './get-rows-catalog.js';
export { addF32, siluMul, siluMulReference, SILU_EXTREME_GATES } from './elementwise.js';
export { argmax, argmaxFamily, argmaxIndex, ARGMAX_FAMILIES, ARGMAX_NAN_BITS } from './argmax.js';
export { f32Gemv, f16Gemv } from './dense-gemv-catalog.js';
export {
  kvStore,
  kvStoreF32,
  checkKvStoreShape,
  kvStoreReference,
  KV_STORE_SHAPE_NAMES,
} from './kv-store.js';
export { lazyKernel, catalogIdOf } from './lazy-kernel.js';
