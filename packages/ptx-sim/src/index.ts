/**
 * Executes PTX on the CPU, to test kernels without a GPU. `parsePtx` turns PTX text into a
 * plain-data module; `simulate` runs an entry over a grid in 32-lane warps and returns the
 * sanitizer's findings (barrier divergence, shared-memory races, out-of-bounds and misaligned
 * accesses, uninitialized registers, bad shuffle masks) and memory-traffic counters, with DRAM
 * traffic behind a modeled L2; with `timing`, an estimate of the launch's time on a GPU model
 * (occupancy, latency, bandwidth, bank conflicts, launch gaps).
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
  type TimingOptions,
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
export { DEFAULT_L2_BYTES, L2Cache } from './executor/l2-cache.js';
export { BUILD_INFO as PTX_SIM_PACKAGE } from './build-info.js';
export { ISSUE_CLASSES, type IssueClass } from './executor/issue-class.js';
export { GPUS, findGpu, type GpuSpec, type Latencies } from './timing/gpu.js';
export {
  occupancy,
  type Occupancy,
  type OccupancyLimit,
  type LaunchResources,
} from './timing/occupancy.js';
export {
  estimateSequence,
  type Bound,
  type Estimate,
  type SequenceEstimate,
} from './timing/estimate.js';
export { duration, formatEstimate, formatSequence } from './timing/format.js';
export { sharedWavefronts, type Wavefronts } from './timing/shared-banks.js';
export { sampleMismatch, scaleSample } from './sample.js';
