import { describeNativeGemv } from './gemv-suite.test-support.js';
import { q4kGemv } from './q4k-gemv.js';

describeNativeGemv({
  kernel: q4kGemv,
  type: 'q4_K',
  prefix: 'Q4_K',
  blocksTitle: 'takes whole 144-byte blocks as 36 words a block',
  expected: { bytes: 432, words: 108 },
});
