/**
 * Renders the KernelSpec IR to NVIDIA PTX. `emitPtx` returns the module text for one architecture
 * together with its launch metadata (the `.param` block layout, grid expressions, static shared
 * bytes) and cache key. `ready` is @forge/ir's, re-exported: await it once before emitting.
 *
 * Assembling with NVIDIA's ptxas is the separate `@forge/ptx/ptxas` entry, since it spawns a
 * process and needs the CUDA toolkit.
 *
 * @module @forge/ptx
 */
export { ready } from '@forge/ir';
export { emitPtx, ptxBackend, PTX_BACKEND } from './emit.js';
export { printPtxIr, type PtxIrFile } from './printed-ir.js';
export {
  checkPtxTarget,
  ptxTarget,
  PTX_ARCHS,
  PTX_ISA_VERSIONS,
  PTX_LIMITS,
  PTX_MIN_VERSIONS,
  PTX_VERSIONS,
  type PtxArch,
  type PtxTarget,
} from './targets.js';
export { ptxLaunchInfo, ptxLaunchParameters } from './launch.js';
export {
  legalizeForPtx,
  PTX_LEGALIZATION,
  PTX_PASSES,
  type LegalizationPass,
} from './legalize/index.js';
export { UNARY_MNEMONICS, BINARY_MNEMONICS, type Mnemonic } from './ops/arithmetic.js';
export { MMA_FORMS, mmaForm, type MmaForm } from './ops/mma.js';
export { BUILD_INFO as PTX_PACKAGE } from './build-info.js';
