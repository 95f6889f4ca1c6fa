/**
 * The KernelSpec IR: kernels as typed, JSON-round-trippable data with their builder, validation,
 * hashing, printer, schedules and reference interpreter. The backends @forge/ptx and @forge/wgsl
 * render what this package defines; `await ready()` once before hashing or emitting.
 *
 * The catalog of reference kernels (each with a float64 reference) is `@forge/ir/kernels`; the
 * GGUF quantization codecs and layouts are `@forge/ir/gguf`. This entry builds no kernel at load.
 *
 * @module @forge/ir
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
export * from './rewrite.js';
export * from './mma.js';
export * from './mma-lowering.js';
export * from './generated-shader.js';
export * from './dispatch.js';
export * from './bind-constants.js';
export * from './backend.js';
export { BUILD_INFO as IR_PACKAGE } from './build-info.js';
