// The proof of a decode target: 16 steps of the tiny models against the float64 reference decoder
// run on the same (dequantized) weights, instantiated once per target.
import { afterAll, describe, expect, it } from 'vitest';
import { argmaxIndex, normalizedMse } from '@forge/ir/kernels';
import { withoutTensor } from '@forge/test-fixtures';
import {
  createReferenceDecoder,
  dequantizedModel,
  openDecoder,
  readLlamaModel,
  type DecodeTarget,
  type KvCache,
} from './index.js';
import { fixturePath, writeEditedModel } from './model-files.test-support.js';

/** One model and cache type, with the largest logit NMSE accepted over its steps. */
export interface DecodeCase {
  readonly name: string;
  readonly file: () => string;
  readonly kv: KvCache;
  readonly bound: number;
  readonly steps: number;
  /** Where attention switches to its long-range launch (DecodePlanOptions); past the tiny cache's 64 by default. */
  readonly attentionLongFrom?: number;
}

/** The prompt; later steps feed back the decoder's own argmax, as `forge decode --generate` does. */
export const PROMPT = [1, 17, 42, 200];

export const F32_MODEL_F32_KV: DecodeCase = {
  name: 'F32 model, f32 KV, long-range attention from position 8',
  file: () => fixturePath('f32'),
  kv: 'f32',
  bound: 1e-8,
  steps: 16,
  attentionLongFrom: 8,
};
export const F32_MODEL_F16_KV: DecodeCase = {
  name: 'F32 model, f16 KV',
  file: () => fixturePath('f32'),
  kv: 'f16',
  bound: 1e-5,
  steps: 16,
};
export const QUANTIZED_MODEL: DecodeCase = {
  name: 'Q4_K/Q6_K/Q8_0/F16 model, f16 KV, long-range attention from position 8',
  file: () => fixturePath('q'),
  kv: 'f16',
  bound: 1e-4,
  steps: 16,
  attentionLongFrom: 8,
};
/** Without output.weight: the logits come from token_embd (tied embeddings). */
export const TIED_MODEL: DecodeCase = {
  name: 'F32 model without output.weight, f32 KV',
  file: () => writeEditedModel('f32', withoutTensor('output.weight')),
  kv: 'f32',
  bound: 1e-8,
  steps: 3,
};

/**
 * Registers one test per case for `target` (on WebGPU with the WGSL `features` given), and prints
 * a line of figures per case.
 */
export function decodeSuite(
  target: DecodeTarget,
  cases: readonly DecodeCase[],
  features: readonly string[] = [],
): void {
  const lines: string[] = [];
  const label = features.length === 0 ? target : `${target} {${features.join(', ')}}`;
  afterAll(() => console.log(lines.join('\n')));
  describe(`forge decode on ${label}`, () => {
    it.each(cases.map((entry) => [entry.name, entry] as const))(
      '%s: every step within bound of the float64 reference',
      async (_, entry) => {
        const model = await readLlamaModel(entry.file());
        const referenceModel = dequantizedModel(model);
        const reference = createReferenceDecoder(referenceModel, { kv: entry.kv });
        // The same model with NeoX rope: the steps after position 0 must tell the two apart.
        const neox = createReferenceDecoder(
          { ...referenceModel, hparams: { ...referenceModel.hparams, ropeMode: 'neox' } },
          { kv: entry.kv },
        );
        const { attentionLongFrom } = entry;
        const decoder = await openDecoder(model, {
          target,
          kv: entry.kv,
          features,
          ...(attentionLongFrom === undefined ? {} : { attentionLongFrom }),
        });
        const errors: number[] = [];
        let ropeDistance = 0;
        let token = PROMPT[0] ?? 0;
        const start = performance.now();
        try {
          for (let position = 0; position < entry.steps; position++) {
            const result = await decoder.step(token, position);
            const expected = reference.step(token, position);
            errors.push(normalizedMse(result.logits, expected));
            ropeDistance = Math.max(
              ropeDistance,
              normalizedMse(result.logits, neox.step(token, position)),
            );
            // argmaxIndex states the kernel's rule: the first NaN logit, else the first largest.
            expect(result.token, `argmax at position ${position}`).toBe(argmaxIndex(result.logits));
            expect(result.logit).toBe(result.logits[result.token]);
            token = PROMPT[position + 1] ?? result.token;
          }
        } finally {
          decoder.close();
        }
        const worst = Math.max(...errors);
        const seconds = (performance.now() - start) / 1000;
        lines.push(
          `${label} | ${entry.name} | ${entry.steps} steps | max NMSE ${worst.toExponential(2)} (bound ${entry.bound}) | NeoX-rope reference ${ropeDistance.toExponential(2)} away | ${seconds.toFixed(1)} s`,
        );
        expect(errors).toHaveLength(entry.steps);
        expect(worst).toBeLessThanOrEqual(entry.bound);
        // A rope mistake would be caught: the wrong-rope reference is far outside the bound.
        if (entry.steps > 1) expect(ropeDistance).toBeGreaterThan(100 * entry.bound);
      },
      600_000,
    );
  });
}
