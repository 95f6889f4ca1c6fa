import { testTier } from '@forge/test-fixtures';
import {
  F32_MODEL_F16_KV,
  F32_MODEL_F32_KV,
  QUANTIZED_MODEL,
  TIED_MODEL,
  decodeSuite,
} from './decode-suite.test-support.js';

// `pnpm test` decodes the quantized model (every mat-vec type, both attention launches) once;
// `pnpm test:full` every model, cache type and feature set.
if (testTier() === 'quick') decodeSuite('wgsl', [QUANTIZED_MODEL]);
else {
  decodeSuite('wgsl', [F32_MODEL_F32_KV, F32_MODEL_F16_KV, QUANTIZED_MODEL, TIED_MODEL]);
  // The other feature set the goldens pin: f16 arithmetic where kernels use it, subgroup reductions.
  decodeSuite('wgsl', [F32_MODEL_F16_KV, QUANTIZED_MODEL], ['f16', 'subgroups']);
}
