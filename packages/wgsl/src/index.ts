export { ready } from '@forge/ir';
export { emitWgsl, WGSL_BACKEND } from './emit.js';
export { wgslTarget, parseWgslFeatures } from './targets.js';
export { wgslLaunchInfo, paramsBinding } from './launch.js';
export { UNARY_TEMPLATES, BINARY_TEMPLATES } from './ops/arithmetic.js';
export { BUILD_INFO as WGSL_PACKAGE } from './build-info.js';
