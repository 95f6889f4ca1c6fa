/// <reference types="webgpu" preserve="true" />
/**
 * `@forge/wgsl/runner`: compiles and runs generated WGSL on WebGPU (Dawn). The only entry of
 * @forge/wgsl that loads Dawn, and only when a context is opened.
 *
 * @module @forge/wgsl/runner
 */
export {
  openWebGpu,
  normalizeFeatures,
  webGpuFeatureName,
  type OpenWebGpuOptions,
  type WebGpuContext,
} from './context.js';
export { sharedWebGpu, closeSharedWebGpu } from './shared.js';
export { compileWgsl, wgslDiagnostics, type CompiledWgsl } from './compile.js';
export { runWgsl, launchGrid, type RunWgslOptions, type RunWgslResult } from './run.js';
export { explicitLayout, type ExplicitLayout } from './pipeline.js';
export { checkInputs, packParams, type WgslInputs } from './inputs.js';
export {
  WEBGPU_SETUP_HINT,
  WEBGPU_PACKAGE_HINT,
  WebGpuError,
  WebGpuFeatureError,
  WebGpuLimitError,
  WebGpuUnavailableError,
  WgslCompileError,
  formatWgslDiagnostic,
  type WgslDiagnostic,
} from './errors.js';
export type { GpuEntry } from './dawn.js';
