/**
 * Executes PTX on the CPU, to test kernels without a GPU. `parsePtx` turns PTX text into a
 * plain-data module; `simulate` runs an entry over a grid in 32-lane warps and returns the
 * sanitizer's findings (barrier divergence, shared-memory races, out-of-bounds and misaligned
 * accesses, uninitialized registers, bad shuffle masks) and memory-traffic counters, with DRAM
 * traffic behind a modeled L2.
 *
 * @packageDocumentation
 */
export * from './ast.js';
export { PtxLimitError, PtxSyntaxError, SimulationInputError } from './errors.js';
export { SIMULATOR_LIMITS, type SimulatorLimit } from './limits.js';
export { parsePtx } from './parser/index.js';
export {
  MAX_DYNAMIC_SHARED_BYTES,
  simulate,
  type BlockSample,
  type KernelArgument,
  type SimulateOptions,
  type SimulationResult,
} from './executor/simulate.js';
export {
  formatFinding,
  FINDING_CATEGORIES,
  type Finding,
  type FindingCategory,
} from './executor/findings.js';
export {
  dramBytesRead,
  sectorEfficiency,
  totalWarpInstructions,
  type Counters,
  type BufferTraffic,
} from './executor/counters.js';
export { StepLimitError } from './executor/cta.js';
export { BUILD_INFO as PTX_SIM_PACKAGE } from './build-info.js';
export { ISSUE_CLASSES, type IssueClass } from './executor/issue-class.js';
export {
  estimate,
  estimateSequence,
  findGpu,
  formatEstimate,
  GPUS,
  type Estimate,
  type GpuSpec,
  type LaunchShape,
  type SequenceEstimate,
  type SequencePart,
} from './cost-model.js';
export { sampleMismatch, scaleSample } from './sample.js';
