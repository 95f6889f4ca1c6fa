/**
 * The KernelSpec IR: kernels as typed, JSON-round-trippable data with their validation, hashing,
 * reference interpreter, catalog of reference kernels (each with a float64 reference) and the GGUF
 * quantization codecs. The backends @forge/ptx and @forge/wgsl render what this package defines;
 * `await ready()` once before hashing or emitting.
 *
 * It also exports the test data every engine's test suite shares (execution cases, probe kernels,
 * OP_ZOO); those are not needed to run kernels.
 *
 * @packageDocumentation
 */
export * from './body.js';
export * from './builder.js';
export * from './errors.js';
/**
 * Expression constructors for kernel bodies (`ir.add(a, b)`, `ir.f32(1)`). Each sets the result
 * type by the type checker's rules; `defineKernel` and `validateSpec` check the operands.
 */
export * as ir from './expressions.js';
export * from './f16.js';
export * from './hash.js';
export { seal } from './sealed.js';
export * from './snapshot.js';
export * from './identifiers.js';
export { describeJson, isRecord, type JsonRecord } from './json-shape.js';
export * from './ops.js';
export * from './printer.js';
export * from './schedule.js';
export * from './size-expression.js';
export * from './spec.js';
export { checkTargetRecord } from './target-record.js';
export * from './types.js';
export * from './validate.js';
export { Uniformity } from './uniformity.js';
export * from './interpreter/run.js';
export { allocateElements, type ElementArray } from './interpreter/memory.js';
export * from './interpreter/scalar-ops.js';
export * from './kernels/catalog-kernel.js';
export * from './kernels/catalog.js';
export { affineF32 } from './kernels/affine-f32.js';
export { rmsnorm } from './kernels/rmsnorm.js';
export { q8_0Gemv } from './kernels/q8-0-gemv.js';
export { q4kGemv } from './kernels/q4k-gemv.js';
export { q6kGemv } from './kernels/q6k-gemv.js';
export { q6kSoaGemv } from './kernels/q6k-soa-gemv.js';
export * from './rewrite.js';
export * from './generated-shader.js';
export * from './testing/execution-cases.js';
export * from './testing/random.js';
export * from './bind-constants.js';
export { OP_ZOO } from './testing/op-zoo.js';
export * from './quant/index.js';
export * from './testing/load-vector-probe.js';
export * from './testing/unpack-half-probe.js';
export * from './testing/limit-specs.js';
export { BUILD_INFO as IR_PACKAGE } from './build-info.js';
export * from './testing/read-counter.js';
