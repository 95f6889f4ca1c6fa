import { describeNativeGemv } from './gemv-suite.test-support.js';
import { q6kGemv } from './q6k-gemv.js';

describeNativeGemv({
  kernel: q6kGemv,
  type: 'q6_K',
  prefix: 'Q6_K',
  blocksTitle: 'takes whole 210-byte blocks, zero-padded to whole words',
  expected: { bytes: 630, words: 158 },
});
