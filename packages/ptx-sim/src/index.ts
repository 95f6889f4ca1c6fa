export * from './ast.js';
export { PtxSyntaxError, SimulationInputError } from './errors.js';
export { parsePtx } from './parser/index.js';
export {
  simulate,
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
