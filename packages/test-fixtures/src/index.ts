/**
 * Test data every engine's test suite shares: the execution cases, probe kernels, OP_ZOO, the
 * vendor-limit specs and a read-counting proxy. Private to this repository (never published):
 * nothing here is needed to run a kernel.
 *
 * @packageDocumentation
 */
export * from './case-labels.js';
export * from './execution-cases.js';
export * from './test-tier.js';
export * from './gemv-cases.js';
export * from './gemv-conditioning.js';
export * from './sdpa-cases.js';
export * from './kv-store-cases.js';
export * from './limit-specs.js';
export * from './load-vector-probe.js';
export * from './store-vector-probe.js';
export * from './mma-probe.js';
export * from './two-stage-sum.js';
export { OP_ZOO } from './op-zoo.js';
export * from './read-counter.js';
export * from './unpack-half-probe.js';
export * from './pack-half-probe.js';
export * from './op-probe.js';
export * from './op-types.js';
export * from './op-probe-compare.js';
export * from './wmma-cases.js';
export * from './rope-cases.js';
export * from './rope-kv-store-cases.js';
export * from './get-rows-cases.js';
export * from './elementwise-cases.js';
export * from './gguf-writer.js';
export * from './tiny-llama.js';
export * from './gguf-edits.js';
export * from './gguf-raw.js';
