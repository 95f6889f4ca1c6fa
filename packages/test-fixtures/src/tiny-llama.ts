// The tiny random Llama models `forge decode` is proven on: seeded weights, written as GGUF with
// llama.cpp's tensor and metadata names. tools/make-tiny-llama.mjs writes them to fixtures/tiny-llama/.
import { Rng, fillUniform, seedFromString } from '@forge/ir/kernels';
import {
  encodeTensor,
  writeGguf,
  type GgufFile,
  type GgufTensorType,
  type GgufValue,
} from './gguf-writer.js';

/** Hyperparameters of the tiny models (GQA; n_embd and n_ff whole Q4_K/Q6_K blocks). */
export const TINY_LLAMA_CONFIG = {
  nVocab: 256,
  nEmbd: 256,
  nLayer: 2,
  nHead: 4,
  nHeadKv: 2,
  headDim: 64,
  // Not n_embd, so a runner that swaps a ffn matrix's axes fails on shape.
  nFf: 512,
  contextLength: 64,
  rmsEps: 1e-5,
  ropeFreqBase: 10000,
} as const;

/** The two committed variants: every tensor F32, or the quantized mix. */
export type TinyLlamaVariant = 'f32' | 'q';

export const TINY_LLAMA_VARIANTS: readonly TinyLlamaVariant[] = ['f32', 'q'];

/** File name of a variant under fixtures/tiny-llama/. */
export const tinyLlamaFileName = (variant: TinyLlamaVariant): string =>
  `tiny-llama-${variant}.gguf`;

/** One weight: its llama.cpp name, ggml ne (ne[0] contiguous, the matmul's input axis) and kind. */
interface WeightSpec {
  readonly name: string;
  readonly ne: readonly number[];
  readonly norm: boolean;
}

/** Every tensor in llama.cpp's order: token_embd, per layer attention then ffn, output_norm, output. */
function weightSpecs(): WeightSpec[] {
  const { nVocab, nEmbd, nLayer, nHeadKv, headDim, nFf } = TINY_LLAMA_CONFIG;
  const nKv = nHeadKv * headDim;
  const specs: WeightSpec[] = [{ name: 'token_embd.weight', ne: [nEmbd, nVocab], norm: false }];
  for (let layer = 0; layer < nLayer; layer++) {
    const blk = (suffix: string, ne: readonly number[], norm = false) =>
      specs.push({ name: `blk.${layer}.${suffix}.weight`, ne, norm });
    blk('attn_norm', [nEmbd], true);
    blk('attn_q', [nEmbd, nEmbd]);
    blk('attn_k', [nEmbd, nKv]);
    blk('attn_v', [nEmbd, nKv]);
    blk('attn_output', [nEmbd, nEmbd]);
    blk('ffn_norm', [nEmbd], true);
    blk('ffn_gate', [nEmbd, nFf]);
    blk('ffn_up', [nEmbd, nFf]);
    blk('ffn_down', [nFf, nEmbd]);
  }
  specs.push({ name: 'output_norm.weight', ne: [nEmbd], norm: true });
  specs.push({ name: 'output.weight', ne: [nEmbd, nVocab], norm: false });
  return specs;
}

/**
 * The quantized model's type of each tensor: norms F32; Q4_K for most matrices; Q6_K for ffn_down
 * and output; Q8_0 for token_embd and layer 1's attn_k; F16 for layer 1's attn_v, so a runner
 * needs every gemv and get-rows type.
 */
export function tinyLlamaTensorType(variant: TinyLlamaVariant, name: string): GgufTensorType {
  if (variant === 'f32' || name.endsWith('_norm.weight')) return 'f32';
  if (name === 'token_embd.weight' || name === 'blk.1.attn_k.weight') return 'q8_0';
  if (name === 'blk.1.attn_v.weight') return 'f16';
  if (name === 'output.weight' || name.endsWith('.ffn_down.weight')) return 'q6_K';
  if (name.endsWith('.attn_v.weight')) return 'q6_K';
  return 'q4_K';
}

/** A tensor's float values, seeded by its name alone (so adding a tensor changes no other). */
export interface TinyLlamaWeight {
  readonly name: string;
  readonly ne: readonly number[];
  readonly values: Float32Array;
}

/** The unquantized weights both variants encode: matrices uniform in ±0.05, norms 1 ± 0.1. */
export function tinyLlamaWeights(): TinyLlamaWeight[] {
  return weightSpecs().map(({ name, ne, norm }) => {
    const rng = new Rng(seedFromString(`tiny-llama/${name}`));
    const values = fillUniform(
      new Float32Array(ne.reduce((product, size) => product * size, 1)),
      rng,
      norm ? 0.1 : 0.05,
    );
    if (norm) values.forEach((value, i) => (values[i] = Math.fround(1 + value)));
    return { name, ne, values };
  });
}

/** The metadata both variants carry, as llama.cpp names it. */
function tinyLlamaMetadata(variant: TinyLlamaVariant): [string, GgufValue][] {
  const c = TINY_LLAMA_CONFIG;
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const f32 = (value: number): GgufValue => ({ type: 'f32', value });
  return [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: `tiny-llama-${variant}` }],
    ['general.alignment', u32(32)],
    ['llama.vocab_size', u32(c.nVocab)],
    ['llama.context_length', u32(c.contextLength)],
    ['llama.embedding_length', u32(c.nEmbd)],
    ['llama.block_count', u32(c.nLayer)],
    ['llama.feed_forward_length', u32(c.nFf)],
    ['llama.attention.head_count', u32(c.nHead)],
    ['llama.attention.head_count_kv', u32(c.nHeadKv)],
    ['llama.attention.layer_norm_rms_epsilon', f32(c.rmsEps)],
    ['llama.rope.freq_base', f32(c.ropeFreqBase)],
    ['llama.rope.dimension_count', u32(c.headDim)],
  ];
}

/** A variant as a GGUF file's parts, for tests that write a broken copy of it. */
export function tinyLlamaGguf(variant: TinyLlamaVariant): GgufFile {
  const tensors = tinyLlamaWeights().map(({ name, ne, values }) =>
    encodeTensor(name, tinyLlamaTensorType(variant, name), ne, values),
  );
  return { metadata: tinyLlamaMetadata(variant), tensors, alignment: 32 };
}

/** The GGUF bytes of a variant; deterministic, so the committed files can be checked byte for byte. */
export function makeTinyLlama(variant: TinyLlamaVariant): Uint8Array {
  return writeGguf(tinyLlamaGguf(variant));
}
