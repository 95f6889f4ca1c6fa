// Issue #26: a NaN logit picks its token on every decode target (the argmax kernel's rule, the
// first NaN wins), as argmaxIndex picks from the float64 reference decoder's logits; never an
// index past the vocabulary.
import { describe, expect, it } from 'vitest';
import { argmaxIndex } from '@forge/ir/kernels';
import { TINY_LLAMA_CONFIG, withEditedWeights } from '@forge/test-fixtures';
import {
  createReferenceDecoder,
  dequantizedModel,
  openDecoder,
  readLlamaModel,
  type DecodeTarget,
} from './index.js';
import { writeEditedModel } from './model-files.test-support.js';

// output.weight rows 200 and 90 (tokens 200 and 90) each hold one NaN: their logits are NaN at
// every step, whatever the hidden state; token 90 comes first.
const NAN_TOKENS = [200, 90];
const file = writeEditedModel(
  'f32',
  withEditedWeights('output.weight', (values) => {
    for (const [k, token] of NAN_TOKENS.entries())
      values[token * TINY_LLAMA_CONFIG.nEmbd + 5 + k] = Number.NaN;
  }),
);

describe('a NaN logit on every decode target', () => {
  const TARGETS: readonly DecodeTarget[] = ['interp', 'wgsl', 'ptx-sim'];
  it.each(TARGETS)(
    '%s picks the first NaN token at every step, as argmaxIndex of the reference logits',
    async (target) => {
      const model = await readLlamaModel(file);
      const reference = createReferenceDecoder(dequantizedModel(model), { kv: 'f32' });
      const decoder = await openDecoder(model, { target, kv: 'f32' });
      try {
        let token = 1;
        for (let position = 0; position < 2; position++) {
          const result = await decoder.step(token, position);
          const expected = reference.step(token, position);
          for (const nan of NAN_TOKENS) expect(Number.isNaN(expected[nan])).toBe(true);
          expect(argmaxIndex(expected)).toBe(90);
          expect(result.token, `position ${position}`).toBe(90);
          expect(argmaxIndex(result.logits)).toBe(90);
          expect(Number.isNaN(result.logit)).toBe(true);
          // The other logits are numbers: the NaN stays in its rows.
          expect(result.logits.filter(Number.isNaN)).toHaveLength(NAN_TOKENS.length);
          token = result.token;
        }
      } finally {
        decoder.close();
      }
    },
    120_000,
  );
});
