// The float64 reference decoder's model from a read GGUF model: every tensor dequantized, so the
// reference runs on exactly the weights the kernels compute with.
import type { ReferenceModel } from './reference-decoder.js';
import { dequantizeTensor } from './contents.js';
import { ModelError, type LlamaModel } from './model.js';

/**
 * `model` as the float64 reference decoder takes it: every tensor dequantized (f16 and the GGUF
 * block formats through ggml-exact codecs) to float64, matrices row-major [out][in] as GGUF stores
 * them; `output` absent when the model ties it to token_embd.
 */
export function dequantizedModel(model: LlamaModel): ReferenceModel {
  const weight = (name: string): Float64Array => {
    const tensor = model.tensors.get(name);
    if (tensor === undefined) throw new ModelError(model.file, name, 'missing from the model');
    return Float64Array.from(dequantizeTensor(tensor));
  };
  const p = model.hparams;
  return {
    hparams: p,
    tokenEmbd: weight('token_embd.weight'),
    layers: Array.from({ length: p.nLayer }, (_, layer) => {
      const blk = (suffix: string) => weight(`blk.${layer}.${suffix}.weight`);
      return {
        attnNorm: blk('attn_norm'),
        wq: blk('attn_q'),
        wk: blk('attn_k'),
        wv: blk('attn_v'),
        wo: blk('attn_output'),
        ffnNorm: blk('ffn_norm'),
        wGate: blk('ffn_gate'),
        wUp: blk('ffn_up'),
        wDown: blk('ffn_down'),
      };
    }),
    outputNorm: weight('output_norm.weight'),
    output: model.tensors.has('output.weight') ? weight('output.weight') : undefined,
  };
}
