// A Llama-architecture GGUF file as the runner needs it: hyperparameters from the metadata and every
// tensor's raw bytes. The whole header is checked first (counts against the file's size, every
// tensor inside the file, each role's type, the hyperparameters), so nothing is allocated for a
// file that cannot run; only then are the tensors' bytes read.
import { quantizedBytes } from '@forge/ir/gguf';
import { dequantizeTensor } from './contents.js';
import { ggmlTypeName } from './gguf/ggml-types.js';
import { readGgufHeader, type GgufHeader, type GgufTensorInfo } from './gguf/gguf-header.js';
import { readHyperparameters, type LlamaHyperparameters } from './hyperparameters.js';
import { ModelError } from './model-error.js';
import { roleTypeProblem, tensorTypeOf, type TensorRole, type TensorType } from './tensor-roles.js';

export { ModelError, ggmlTypeName };
export type { LlamaHyperparameters, RopeMode } from './hyperparameters.js';
export type { TensorType } from './tensor-roles.js';

/** One tensor of the file: its ggml ne (ne[0] contiguous, a matmul's input axis) and raw bytes. */
export interface ModelTensor {
  readonly name: string;
  readonly type: TensorType;
  readonly ne: readonly number[];
  /** The tensor's bytes exactly as stored (a norm weight's converted to f32). */
  readonly bytes: Uint8Array;
}

/** A model read from a GGUF file: what the decode plan is built from. */
export interface LlamaModel {
  readonly file: string;
  /** `general.name`, or the file name. */
  readonly name: string;
  readonly hparams: LlamaHyperparameters;
  /** Every tensor the runner uses, by GGUF name; `output.weight` is absent when tied to `token_embd`. */
  readonly tensors: ReadonlyMap<string, ModelTensor>;
}

/** Bytes a tensor of `type` with `ne` occupies. */
export function tensorBytes(type: TensorType, ne: readonly number[]): number {
  const cols = ne[0] ?? 1;
  const rows = ne.slice(1).reduce((product, size) => product * size, 1);
  if (type === 'f32') return 4 * rows * cols;
  if (type === 'f16') return 2 * rows * cols;
  return quantizedBytes(type, rows, cols);
}

/** A tensor arch `llama` uses: its name, the ne it must have, and what it is for. */
export interface LlamaTensorShape {
  readonly name: string;
  readonly ne: readonly number[];
  readonly role: TensorRole;
  readonly optional?: boolean;
}

/** The tensors of arch `llama` and the ne each must have, in file order. */
export function llamaTensorShapes(p: LlamaHyperparameters): LlamaTensorShape[] {
  const [qDim, kvDim] = [p.nHead * p.headDim, p.nKvHead * p.headDim];
  const shapes: LlamaTensorShape[] = [
    { name: 'token_embd.weight', ne: [p.nEmbd, p.nVocab], role: 'embedding' },
  ];
  for (let layer = 0; layer < p.nLayer; layer++) {
    const blk = (suffix: string, ne: readonly number[], role: TensorRole = 'matmul') =>
      shapes.push({ name: `blk.${layer}.${suffix}.weight`, ne, role });
    blk('attn_norm', [p.nEmbd], 'norm');
    blk('attn_q', [p.nEmbd, qDim]);
    blk('attn_k', [p.nEmbd, kvDim]);
    blk('attn_v', [p.nEmbd, kvDim]);
    blk('attn_output', [qDim, p.nEmbd]);
    blk('ffn_norm', [p.nEmbd], 'norm');
    blk('ffn_gate', [p.nEmbd, p.nFf]);
    blk('ffn_up', [p.nEmbd, p.nFf]);
    blk('ffn_down', [p.nFf, p.nEmbd]);
  }
  shapes.push({ name: 'output_norm.weight', ne: [p.nEmbd], role: 'norm' });
  shapes.push({ name: 'output.weight', ne: [p.nEmbd, p.nVocab], role: 'matmul', optional: true });
  return shapes;
}

// The tensors a layer has, which block_count must not claim more of than the file holds.
const LAYER_TENSORS = [
  'attn_norm',
  'attn_q',
  'attn_k',
  'attn_v',
  'attn_output',
  'ffn_norm',
  'ffn_gate',
  'ffn_up',
  'ffn_down',
];

/** Throws for a block_count the file's tensors cannot hold, naming the first missing tensor. */
function checkBlockCount(file: string, header: GgufHeader, nLayer: number): void {
  if (LAYER_TENSORS.length * nLayer <= header.tensors.length) return;
  const names = new Set(header.tensors.map((tensor) => tensor.name));
  for (let layer = 0; ; layer++)
    for (const suffix of LAYER_TENSORS) {
      const name = `blk.${layer}.${suffix}.weight`;
      if (!names.has(name))
        throw new ModelError(
          file,
          name,
          `missing from the file (llama.block_count is ${nLayer}; the file has ${header.tensors.length} tensors)`,
        );
    }
}

/** The tensor's values as f32 bytes: how a norm weight of any NORM_TYPES type reaches the kernels. */
function asFloat32(info: GgufTensorInfo, bytes: Uint8Array): Uint8Array {
  const type = tensorTypeOf(info.type);
  if (type === 'f32') return bytes;
  if (type !== undefined)
    return new Uint8Array(dequantizeTensor({ name: info.name, type, ne: info.ne, bytes }).buffer);
  // bfloat16 is the top half of an f32: its bits shifted up are the f32's bits.
  const halves = new Uint16Array(bytes.slice().buffer);
  return new Uint8Array(Uint32Array.from(halves, (half) => half << 16).buffer);
}

/** The tensors arch `llama` uses in this file, each checked for shape and role type; no bytes read. */
function checkTensors(
  file: string,
  header: GgufHeader,
  hparams: LlamaHyperparameters,
): { shape: LlamaTensorShape; info: GgufTensorInfo }[] {
  checkBlockCount(file, header, hparams.nLayer);
  const infos = new Map(header.tensors.map((info) => [info.name, info]));
  const tied = !infos.has('output.weight');
  const used: { shape: LlamaTensorShape; info: GgufTensorInfo }[] = [];
  for (const shape of llamaTensorShapes(hparams)) {
    const { name, ne, optional } = shape;
    const info = infos.get(name);
    if (info === undefined) {
      if (optional === true) continue;
      throw new ModelError(file, name, 'missing from the file');
    }
    if (info.ne.length !== ne.length || info.ne.some((size, axis) => size !== ne[axis]))
      throw new ModelError(
        file,
        name,
        `ne [${info.ne.join(', ')}] does not match the hyperparameters, which give [${ne.join(', ')}]`,
      );
    const role = tied && shape.role === 'embedding' ? 'tied-embedding' : shape.role;
    const problem = roleTypeProblem(role, info.type);
    if (problem !== undefined) throw new ModelError(file, name, problem);
    used.push({ shape, info });
  }
  return used;
}

/**
 * Reads the Llama model in `blob` (a GGUF file's bytes: `new Blob([bytes])`, a browser `File`, or
 * Node's `fs.openAsBlob`), named `file` in errors. Throws a ModelError (one line naming the tensor
 * or metadata key) for bytes that are not GGUF, a malformed or truncated header, another
 * architecture, inconsistent hyperparameters, a missing tensor, a tensor whose shape does not fit
 * the hyperparameters, or a type its role cannot take; all before any tensor's bytes are read.
 */
export async function parseLlamaModel(blob: Blob, file: string): Promise<LlamaModel> {
  const header = await readGgufHeader(blob, file);
  const tokenEmbd = header.tensors.find((tensor) => tensor.name === 'token_embd.weight');
  const hparams = readHyperparameters(file, header.metadata, tokenEmbd?.ne[1]);
  const tensors = new Map<string, ModelTensor>();
  for (const { shape, info } of checkTensors(file, header, hparams)) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await blob.slice(info.start, info.start + info.bytes).arrayBuffer());
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ModelError(file, info.name, `cannot read its bytes (${why})`);
    }
    if (bytes.length !== info.bytes)
      throw new ModelError(file, info.name, `the file changed while it was read`);
    const norm = shape.role === 'norm';
    const type = norm ? 'f32' : tensorTypeOf(info.type);
    if (type === undefined)
      throw new ModelError(file, info.name, `type ${info.type.name} is not read`);
    tensors.set(info.name, {
      name: info.name,
      type,
      ne: info.ne,
      bytes: norm ? asFloat32(info, bytes) : bytes,
    });
  }
  const generalName = header.metadata.get('general.name')?.value;
  return {
    file,
    name: typeof generalName === 'string' ? generalName : (file.split('/').pop() ?? file),
    hparams,
    tensors,
  };
}
