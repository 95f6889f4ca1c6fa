// The float64 reference decoder's model from a read GGUF model: every tensor dequantized, so the
// reference runs on exactly the weights the kernels compute with.
import type { ReferenceModel } from '@forge/test-fixtures';
import { dequantizeTensor } from './contents.js';
import type { LlamaModel } from './model.js';

export function referenceModelOf(model: LlamaModel): ReferenceModel {
  const weight = (name: string): Float64Array => {
    const tensor = model.tensors.get(name);
    if (tensor === undefined) throw new Error(`${name} is missing`);
    return Float64Array.from(dequantizeTensor(tensor));
  };
  const p = model.hparams;
  return {
    hparams: {
      nVocab: p.nVocab,
      nEmbd: p.nEmbd,
      nLayer: p.nLayer,
      nHead: p.nHead,
      nKvHead: p.nKvHead,
      headDim: p.headDim,
      nFf: p.nFf,
      rmsEps: p.rmsEps,
      ropeBase: p.ropeBase,
      ropeMode: p.ropeMode,
    },
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
