import { testTier } from '@forge/test-fixtures';
import {
  F32_MODEL_F16_KV,
  F32_MODEL_F32_KV,
  QUANTIZED_MODEL,
  TIED_MODEL,
  decodeSuite,
} from './decode-suite.test-support.js';

// `pnpm test` the quantized model and the tied one (logits from token_embd); `pnpm test:full` all.
decodeSuite(
  'interp',
  testTier() === 'quick'
    ? [QUANTIZED_MODEL, TIED_MODEL]
    : [F32_MODEL_F32_KV, F32_MODEL_F16_KV, QUANTIZED_MODEL, TIED_MODEL],
);
