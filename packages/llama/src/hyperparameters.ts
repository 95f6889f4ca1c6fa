// The hyperparameters arch `llama` stores in its GGUF metadata, checked to be consistent with each
// other and with what the kernels need, before any tensor is read.
import type { GgufMetadataValue } from './gguf/gguf-header.js';
import { ModelError } from './model-error.js';

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

type Metadata = ReadonlyMap<string, GgufMetadataValue>;

/** A number from the metadata: a positive whole number (`integer`) or a finite positive number. */
function metadataNumber(
  file: string,
  metadata: Metadata,
  key: string,
  integer: boolean,
  fallback?: number,
): number {
  const entry = metadata.get(key);
  if (entry === undefined && fallback !== undefined) return fallback;
  if (entry === undefined) throw new ModelError(file, key, 'missing from the metadata');
  const raw = entry.value;
  const value = typeof raw === 'bigint' ? Number(raw) : raw;
  const valid =
    typeof value === 'number' &&
    (integer ? Number.isSafeInteger(value) && value >= 1 : Number.isFinite(value) && value > 0);
  if (!valid)
    throw new ModelError(
      file,
      key,
      `${entry.type === 'array' ? `an array of ${entry.itemType}` : typeof raw === 'string' ? `the string ${JSON.stringify(raw)}` : String(raw)} is not a ${integer ? 'positive whole number' : 'finite positive number'}`,
    );
  return value;
}

/**
 * The hyperparameters arch `llama` stores, checked: heads divide the embedding (or key_length is
 * given), head_dim is even, KV heads divide heads, the vocabulary is at least 1, rope base and
 * RMS epsilon are finite and positive. `vocabFromTensor` is token_embd's ne[1], if present.
 */
export function readHyperparameters(
  file: string,
  metadata: Metadata,
  vocabFromTensor: number | undefined,
): LlamaHyperparameters {
  const arch = metadata.get('general.architecture')?.value;
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
  const keyLength = metadata.has('llama.attention.key_length')
    ? int('attention.key_length')
    : undefined;
  if (keyLength === undefined && nEmbd % nHead !== 0)
    throw new ModelError(
      file,
      'llama.attention.head_count',
      `${nHead} heads do not divide embedding_length ${nEmbd}, and no attention.key_length is given`,
    );
  const headDim = keyLength ?? nEmbd / nHead;
  if (headDim % 2 !== 0)
    throw new ModelError(
      file,
      keyLength === undefined ? 'llama.attention.head_count' : 'llama.attention.key_length',
      `head_dim ${headDim} is odd; rope rotates pairs of values`,
    );
  if (nHead % nKvHead !== 0)
    throw new ModelError(
      file,
      'llama.attention.head_count_kv',
      `${nKvHead} KV heads do not divide head_count ${nHead}`,
    );
  if (int('attention.value_length', headDim) !== headDim)
    throw new ModelError(file, 'llama.attention.value_length', `is not key_length ${headDim}`);
  if (int('rope.dimension_count', headDim) !== headDim)
    throw new ModelError(
      file,
      'llama.rope.dimension_count',
      `rotating part of a head (${int('rope.dimension_count')} of ${headDim}) is not supported`,
    );
  const nVocab =
    vocabFromTensor === undefined ? int('vocab_size') : int('vocab_size', vocabFromTensor);
  if (nVocab !== vocabFromTensor && vocabFromTensor !== undefined)
    throw new ModelError(
      file,
      'llama.vocab_size',
      `${nVocab} is not token_embd.weight's ${vocabFromTensor} rows`,
    );
  return {
    nVocab,
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
