// A Llama-architecture GGUF file as the runner needs it: hyperparameters from the metadata and every
// tensor's raw bytes, each checked against the shape the architecture gives it.
import { GGMLQuantizationType, gguf } from '@huggingface/gguf';
import { ForgeError } from '@forge/ir';
import { QUANT_FORMATS, QUANT_TYPES, quantizedBytes, type QuantType } from '@forge/ir/gguf';

/** How rope pairs a head's values: ggml's normal mode (2i, 2i+1), which arch `llama` uses, or NeoX (i, i + d/2). */
export type RopeMode = 'normal' | 'neox';

/** The hyperparameters of a Llama-architecture model. */
export interface LlamaHyperparameters {
  readonly nVocab: number;
  readonly nEmbd: number;
  readonly nLayer: number;
  readonly nHead: number;
  readonly nKvHead: number;
  readonly headDim: number;
  readonly nFf: number;
  readonly rmsEps: number;
  readonly ropeBase: number;
  readonly ropeMode: RopeMode;
  /** Positions the model was trained for (`llama.context_length`). */
  readonly contextLength: number;
}

/** A tensor's storage type: plain floats or one of the GGUF block formats Forge reads. */
export type TensorType = 'f32' | 'f16' | QuantType;

/** One tensor of the file: its ggml ne (ne[0] contiguous, a matmul's input axis) and raw bytes. */
export interface ModelTensor {
  readonly name: string;
  readonly type: TensorType;
  readonly ne: readonly number[];
  /** The tensor's bytes exactly as stored. */
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

/** A model file the runner cannot take, named by the tensor or metadata key at fault; a user's mistake. */
export class ModelError extends ForgeError {
  override readonly name = 'ModelError';
  constructor(
    readonly file: string,
    /** The tensor name or metadata key at fault, or '' for the file as a whole. */
    readonly field: string,
    detail: string,
  ) {
    super(`${file}: ${field === '' ? '' : `${field}: `}${detail}`);
  }
}

/** GGUF tensor type ids and the name each has here; ids missing from this table are unsupported. */
const TYPE_IDS: ReadonlyMap<number, TensorType> = new Map<number, TensorType>([
  [0, 'f32'],
  [1, 'f16'],
  ...QUANT_TYPES.map((type): [number, TensorType] => [QUANT_FORMATS[type].ggmlTypeId, type]),
]);

/** ggml's name for a type id (`q4_K`, `f32`, `iq4_nl`), as ggml_type_name prints it. */
export function ggmlTypeName(id: number): string {
  const quant = QUANT_TYPES.find((type) => QUANT_FORMATS[type].ggmlTypeId === id);
  if (quant !== undefined) return quant;
  const name: unknown = (GGMLQuantizationType as unknown as Record<number, unknown>)[id];
  return typeof name === 'string' ? name.toLowerCase().replace(/_k$/, '_K') : `type ${id}`;
}

/** Bytes a tensor of `type` with `ne` occupies. */
export function tensorBytes(type: TensorType, ne: readonly number[]): number {
  const cols = ne[0] ?? 1;
  const rows = ne.slice(1).reduce((product, size) => product * size, 1);
  if (type === 'f32') return 4 * rows * cols;
  if (type === 'f16') return 2 * rows * cols;
  return quantizedBytes(type, rows, cols);
}

/** The tensors of arch `llama` and the ne each must have, in file order. */
export function llamaTensorShapes(
  p: LlamaHyperparameters,
): { name: string; ne: readonly number[]; optional?: boolean }[] {
  const [qDim, kvDim] = [p.nHead * p.headDim, p.nKvHead * p.headDim];
  const shapes: { name: string; ne: readonly number[]; optional?: boolean }[] = [
    { name: 'token_embd.weight', ne: [p.nEmbd, p.nVocab] },
  ];
  for (let layer = 0; layer < p.nLayer; layer++) {
    const blk = (suffix: string, ne: readonly number[]) =>
      shapes.push({ name: `blk.${layer}.${suffix}.weight`, ne });
    blk('attn_norm', [p.nEmbd]);
    blk('attn_q', [p.nEmbd, qDim]);
    blk('attn_k', [p.nEmbd, kvDim]);
    blk('attn_v', [p.nEmbd, kvDim]);
    blk('attn_output', [qDim, p.nEmbd]);
    blk('ffn_norm', [p.nEmbd]);
    blk('ffn_gate', [p.nEmbd, p.nFf]);
    blk('ffn_up', [p.nEmbd, p.nFf]);
    blk('ffn_down', [p.nFf, p.nEmbd]);
  }
  shapes.push({ name: 'output_norm.weight', ne: [p.nEmbd] });
  shapes.push({ name: 'output.weight', ne: [p.nEmbd, p.nVocab], optional: true });
  return shapes;
}

type Metadata = Readonly<Record<string, unknown>>;

function metadataNumber(
  file: string,
  metadata: Metadata,
  key: string,
  integer: boolean,
  fallback?: number,
): number {
  const raw = metadata[key];
  if (raw === undefined && fallback !== undefined) return fallback;
  if (raw === undefined) throw new ModelError(file, key, 'missing from the metadata');
  const value = typeof raw === 'bigint' ? Number(raw) : raw;
  const valid =
    typeof value === 'number' &&
    (integer ? Number.isSafeInteger(value) && value >= 1 : Number.isFinite(value) && value > 0);
  if (!valid)
    throw new ModelError(
      file,
      key,
      `${String(raw)} is not a ${integer ? 'positive whole number' : 'positive number'}`,
    );
  return value as number;
}

/** The hyperparameters arch `llama` stores, checked for what the kernels need. */
function readHyperparameters(
  file: string,
  metadata: Metadata,
  tokenEmbd: readonly number[] | undefined,
): LlamaHyperparameters {
  const arch = metadata['general.architecture'];
  if (arch !== 'llama')
    throw new ModelError(
      file,
      'general.architecture',
      `'${String(arch)}' is not 'llama', the one architecture forge decode runs`,
    );
  const int = (key: string, fallback?: number) =>
    metadataNumber(file, metadata, `llama.${key}`, true, fallback);
  const nEmbd = int('embedding_length');
  const nHead = int('attention.head_count');
  const nKvHead = int('attention.head_count_kv', nHead);
  if (nEmbd % nHead !== 0)
    throw new ModelError(
      file,
      'llama.attention.head_count',
      `${nHead} heads do not divide embedding_length ${nEmbd}`,
    );
  if (nHead % nKvHead !== 0)
    throw new ModelError(
      file,
      'llama.attention.head_count_kv',
      `${nKvHead} KV heads do not divide head_count ${nHead}`,
    );
  const headDim = int('attention.key_length', nEmbd / nHead);
  if (int('attention.value_length', headDim) !== headDim)
    throw new ModelError(file, 'llama.attention.value_length', `is not key_length ${headDim}`);
  if (int('rope.dimension_count', headDim) !== headDim)
    throw new ModelError(
      file,
      'llama.rope.dimension_count',
      `rotating part of a head (${int('rope.dimension_count')} of ${headDim}) is not supported`,
    );
  return {
    nVocab: int('vocab_size', tokenEmbd?.[1] ?? 0),
    nEmbd,
    nLayer: int('block_count'),
    nHead,
    nKvHead,
    headDim,
    nFf: int('feed_forward_length'),
    rmsEps: metadataNumber(file, metadata, 'llama.attention.layer_norm_rms_epsilon', false),
    ropeBase: metadataNumber(file, metadata, 'llama.rope.freq_base', false, 10000),
    ropeMode: 'normal',
    contextLength: int('context_length'),
  };
}

/** GGUF's byte ranges served from a Blob, so @huggingface/gguf reads a file, a File or bytes alike. */
function blobFetch(blob: Blob): typeof fetch {
  return async (_url, init) => {
    const range = /bytes=(\d+)-(\d+)/.exec(new Headers(init?.headers).get('Range') ?? '');
    const start = Number(range?.[1] ?? 0);
    const end = Math.min(Number(range?.[2] ?? blob.size - 1), blob.size - 1);
    return new Response(blob.slice(start, end + 1), {
      status: 206,
      headers: { 'content-range': `bytes ${start}-${end}/${blob.size}` },
    });
  };
}

/**
 * Reads the Llama model in `blob` (a GGUF file's bytes: `new Blob([bytes])`, a browser `File`, or
 * Node's `fs.openAsBlob`), named `file` in errors. Throws a ModelError (one line naming the tensor
 * or metadata key) for bytes that are not GGUF, another architecture, a missing tensor, a tensor
 * whose shape does not fit the hyperparameters, a type Forge cannot read, or a truncated file.
 */
export async function parseLlamaModel(blob: Blob, file: string): Promise<LlamaModel> {
  let parsed: Awaited<ReturnType<typeof gguf>>;
  try {
    // Any http(s) address makes the library fetch ranges, which blobFetch serves from the blob.
    parsed = await gguf('https://forge.invalid/model.gguf', { fetch: blobFetch(blob) });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ModelError(file, '', `not a readable GGUF file (${why})`);
  }
  const metadata = parsed.metadata as unknown as Metadata;
  const infos = new Map(parsed.tensorInfos.map((info) => [info.name, info]));
  const hparams = readHyperparameters(
    file,
    metadata,
    infos.get('token_embd.weight')?.shape.map(Number),
  );
  const tensors = new Map<string, ModelTensor>();
  for (const { name, ne, optional } of llamaTensorShapes(hparams)) {
    const info = infos.get(name);
    if (info === undefined) {
      if (optional === true) continue;
      throw new ModelError(file, name, 'missing from the file');
    }
    const actual = info.shape.map(Number);
    if (actual.length !== ne.length || actual.some((size, axis) => size !== ne[axis]))
      throw new ModelError(
        file,
        name,
        `ne [${actual.join(', ')}] does not match the hyperparameters, which give [${ne.join(', ')}]`,
      );
    const id = Number(info.dtype);
    const type = TYPE_IDS.get(id);
    if (type === undefined)
      throw new ModelError(
        file,
        name,
        `type ${ggmlTypeName(id)} is not supported (Forge reads ${[...TYPE_IDS.values()].join(', ')})`,
      );
    if (type !== 'f32' && type !== 'f16' && (ne[0] ?? 0) % QUANT_FORMATS[type].blockSize !== 0)
      throw new ModelError(file, name, `ne[0] ${ne[0]} is not whole ${type} blocks`);
    const length = tensorBytes(type, ne);
    const start = Number(parsed.tensorDataOffset + info.offset);
    const bytes = new Uint8Array(await blob.slice(start, start + length).arrayBuffer());
    if (bytes.length !== length)
      throw new ModelError(
        file,
        name,
        `the file ends ${length - bytes.length} bytes before the tensor's ${length} bytes`,
      );
    tensors.set(name, { name, type, ne: actual, bytes });
  }
  const generalName = metadata['general.name'];
  return {
    file,
    name: typeof generalName === 'string' ? generalName : (file.split('/').pop() ?? file),
    hparams,
    tensors,
  };
}
