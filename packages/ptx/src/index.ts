export { ready } from '@forge/ir';
export { emitPtx, PTX_BACKEND } from './emit.js';
export { ptxTarget, PTX_VERSIONS } from './targets.js';
export { ptxLaunchInfo, ptxLaunchParameters } from './launch.js';
export { legalizeForPtx, PTX_LEGALIZATION, type LegalizationPass } from './legalize/index.js';
export { UNARY_MNEMONICS, BINARY_MNEMONICS } from './ops/arithmetic.js';
export { BUILD_INFO as PTX_PACKAGE } from './build-info.js';
