/**
 * Renders the KernelSpec IR to WebGPU WGSL. `emitWgsl` returns the shader together with its launch
 * metadata (bindings, the params struct layout, grid expressions, required device features) and
 * cache key. `ready` is @forge/ir's, re-exported: await it once before emitting.
 *
 * This entry never loads Dawn; compiling and running shaders is the separate `@forge/wgsl/runner`
 * entry.
 *
 * @module @forge/wgsl
 */
export { ready } from '@forge/ir';
export { emitWgsl, wgslBackend, WGSL_BACKEND } from './emit.js';
export {
  checkWgslTarget,
  wgslTarget,
  parseWgslFeatures,
  WGSL_FEATURES,
  WGSL_LIMITS,
  type WgslFeature,
  type WgslTarget,
} from './targets.js';
export { wgslLaunchInfo, paramsBinding } from './launch.js';
export { UNARY_TEMPLATES, BINARY_TEMPLATES, type Template } from './ops/arithmetic.js';
export { BUILD_INFO as WGSL_PACKAGE } from './build-info.js';
