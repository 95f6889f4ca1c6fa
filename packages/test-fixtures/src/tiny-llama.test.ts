// The committed tiny models are what the generator makes today (byte for byte), and they read back
// as llama.cpp would name and shape them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GGMLQuantizationType, gguf } from '@huggingface/gguf';
import { dequantize, type QuantType } from '@forge/ir/gguf';
import { f16FromBits } from '@forge/ir';
import { describe, expect, it } from 'vitest';
import {
  TINY_LLAMA_CONFIG,
  TINY_LLAMA_VARIANTS,
  makeTinyLlama,
  tinyLlamaFileName,
  tinyLlamaWeights,
  type TinyLlamaVariant,
} from './tiny-llama.js';
import { ggufTensorBytes } from './gguf-writer.js';

const DIR = new URL('../../../fixtures/tiny-llama/', import.meta.url);
const pathOf = (variant: TinyLlamaVariant) =>
  fileURLToPath(new URL(tinyLlamaFileName(variant), DIR));

describe('tiny Llama fixtures', () => {
  it.each(TINY_LLAMA_VARIANTS)(
    '%s: the committed file is byte-identical to a fresh generation (node tools/make-tiny-llama.mjs)',
    (variant) => {
      const committed = new Uint8Array(readFileSync(pathOf(variant)));
      const fresh = makeTinyLlama(variant);
      expect(fresh.length).toBe(committed.length);
      // One comparison, not a per-byte diff: the files are megabytes.
      expect(Buffer.compare(Buffer.from(fresh), Buffer.from(committed))).toBe(0);
    },
  );

  it('has matrices in ±0.05 and norms in 1 ± 0.1, all distinct per tensor', () => {
    const weights = tinyLlamaWeights();
    const firsts = new Set<number>();
    for (const { name, values } of weights) {
      const norm = name.endsWith('_norm.weight');
      let worst = 0;
      for (const value of values) worst = Math.max(worst, Math.abs(value - (norm ? 1 : 0)));
      expect(worst, name).toBeLessThanOrEqual(norm ? 0.1 : 0.05);
      // Spread over the range, not bunched near zero.
      expect(worst, name).toBeGreaterThan(norm ? 0.09 : 0.045);
      firsts.add(values[0] ?? 0);
    }
    expect(firsts.size).toBe(weights.length);
  });

  it.each(TINY_LLAMA_VARIANTS)(
    '%s: llama metadata, tensor names, shapes and types, and weights that decode to the source',
    async (variant) => {
      const path = pathOf(variant);
      const file = new Uint8Array(readFileSync(path));
      const parsed = await gguf(path, { allowLocalFile: true });
      const c = TINY_LLAMA_CONFIG;
      expect(parsed.metadata).toMatchObject({
        version: 3,
        'general.architecture': 'llama',
        'general.alignment': 32,
        'llama.context_length': c.contextLength,
        'llama.embedding_length': c.nEmbd,
        'llama.block_count': c.nLayer,
        'llama.feed_forward_length': c.nFf,
        'llama.attention.head_count': c.nHead,
        'llama.attention.head_count_kv': c.nHeadKv,
        'llama.attention.layer_norm_rms_epsilon': Math.fround(c.rmsEps),
        'llama.rope.freq_base': c.ropeFreqBase,
        'llama.rope.dimension_count': c.headDim,
      });
      const weights = tinyLlamaWeights();
      const infos = parsed.tensorInfos;
      expect(infos.map((info) => info.name)).toEqual(weights.map((weight) => weight.name));
      const shape = (name: string) => infos.find((info) => info.name === name)?.shape.map(Number);
      expect(shape('token_embd.weight')).toEqual([c.nEmbd, c.nVocab]);
      expect(shape('blk.1.attn_k.weight')).toEqual([c.nEmbd, c.nHeadKv * c.headDim]);
      expect(shape('blk.0.ffn_down.weight')).toEqual([c.nFf, c.nEmbd]);
      expect(shape('output.weight')).toEqual([c.nEmbd, c.nVocab]);

      const types = new Set(infos.map((info) => info.dtype));
      if (variant === 'f32') expect([...types]).toEqual([GGMLQuantizationType.F32]);
      else
        expect([...types].sort((a, b) => a - b)).toEqual([
          GGMLQuantizationType.F32,
          GGMLQuantizationType.F16,
          GGMLQuantizationType.Q8_0,
          GGMLQuantizationType.Q4_K,
          GGMLQuantizationType.Q6_K,
        ]);

      const QUANT: Partial<Record<number, QuantType>> = {
        [GGMLQuantizationType.Q8_0]: 'q8_0',
        [GGMLQuantizationType.Q4_K]: 'q4_K',
        [GGMLQuantizationType.Q6_K]: 'q6_K',
      };
      infos.forEach((info, index) => {
        const source = weights[index]!.values;
        const start = Number(parsed.tensorDataOffset + info.offset);
        const view = new DataView(file.buffer, file.byteOffset + start);
        const cols = Number(info.shape[0]);
        const quant = QUANT[info.dtype];
        const decoded =
          info.dtype === GGMLQuantizationType.F32
            ? Float32Array.from(source, (_, i) => view.getFloat32(4 * i, true))
            : info.dtype === GGMLQuantizationType.F16
              ? Float32Array.from(source, (_, i) => f16FromBits(view.getUint16(2 * i, true)))
              : dequantize(
                  quant!,
                  file.subarray(
                    start,
                    start + ggufTensorBytes(quant!, [cols, source.length / cols]),
                  ),
                  source.length / cols,
                  cols,
                );
        // F32 is exact; the others within their format's step for |w| ≤ 0.05.
        const bound = info.dtype === GGMLQuantizationType.F32 ? 0 : 0.05 / 7;
        let worst = 0;
        decoded.forEach((value, i) => (worst = Math.max(worst, Math.abs(value - source[i]!))));
        expect(worst, info.name).toBeLessThanOrEqual(bound);
      });
    },
  );
});
