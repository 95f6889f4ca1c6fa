import { describe, expect, it } from 'vitest';
import {
  TINY_LLAMA_CONFIG,
  decodeRawGguf,
  encodeRawGguf,
  rawU32,
  withRawPair,
  retypeTensorId,
  tinyLlamaTensorType,
  withMetadata,
  withTensorShape,
  withTensorType,
  withoutTensor,
  writeGguf,
} from '@forge/test-fixtures';
import {
  ModelError,
  dequantizeTensor,
  parseLlamaModel,
  readLlamaModel,
  tensorBytes,
} from './index.js';
import {
  fixturePath,
  tinyLlamaFile,
  writeEditedModel,
  writeModelBytes,
} from './model-files.test-support.js';

/** The ModelError readLlamaModel throws for `path`, checked to be one line. */
async function modelError(path: string): Promise<ModelError> {
  const error = await readLlamaModel(path).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelError);
  expect((error as ModelError).message).not.toContain('\n');
  return error as ModelError;
}

describe('readLlamaModel', () => {
  it.each(['f32', 'q'] as const)(
    'reads the tiny %s model: hyperparameters and tensors',
    async (variant) => {
      const model = await readLlamaModel(fixturePath(variant));
      const c = TINY_LLAMA_CONFIG;
      expect(model.name).toBe(`tiny-llama-${variant}`);
      expect(model.hparams).toEqual({
        nVocab: c.nVocab,
        nEmbd: c.nEmbd,
        nLayer: c.nLayer,
        nHead: c.nHead,
        nKvHead: c.nHeadKv,
        headDim: c.headDim,
        nFf: c.nFf,
        rmsEps: Math.fround(c.rmsEps),
        ropeBase: c.ropeFreqBase,
        ropeMode: 'normal',
        contextLength: c.contextLength,
      });
      expect(model.tensors.size).toBe(3 + 9 * c.nLayer);
      for (const tensor of model.tensors.values()) {
        expect(tensor.type, tensor.name).toBe(tinyLlamaTensorType(variant, tensor.name));
        expect(tensor.bytes.length).toBe(tensorBytes(tensor.type, tensor.ne));
      }
      // Every tensor's bytes are exactly what the generator encoded.
      for (const written of tinyLlamaFile(variant).tensors)
        expect(
          Buffer.from(written.data).equals(
            model.tensors.get(written.name)?.bytes ?? new Uint8Array(),
          ),
          written.name,
        ).toBe(true);
    },
  );

  it('reads the same model from bytes in memory (a Blob, as a browser File is)', async () => {
    const bytes = writeGguf(tinyLlamaFile('f32'));
    const fromBytes = await parseLlamaModel(new Blob([bytes]), 'in memory');
    const fromFile = await readLlamaModel(fixturePath('f32'));
    expect(fromBytes.hparams).toEqual(fromFile.hparams);
    expect([...fromBytes.tensors.keys()]).toEqual([...fromFile.tensors.keys()]);
    for (const [name, tensor] of fromFile.tensors)
      expect(Buffer.from(fromBytes.tensors.get(name)?.bytes ?? []).equals(tensor.bytes), name).toBe(
        true,
      );
    await expect(parseLlamaModel(new Blob([bytes.subarray(0, 100)]), 'cut')).rejects.toThrow(
      /^cut: /,
    );
  });

  it('names a file that is not GGUF', async () => {
    const path = writeModelBytes(new TextEncoder().encode('not a model at all, just text'));
    expect((await modelError(path)).message).toMatch(/not a GGUF file/);
    expect((await modelError(`${path}.missing`)).message).toMatch(/ENOENT/);
  });

  it('names another architecture', async () => {
    const path = writeEditedModel(
      'f32',
      withMetadata('general.architecture', { type: 'string', value: 'gpt2' }),
    );
    const error = await modelError(path);
    expect(error.field).toBe('general.architecture');
    expect(error.message).toContain("'gpt2' is not 'llama'");
  });

  it('names missing or broken metadata', async () => {
    const missing = await modelError(
      writeEditedModel('f32', withMetadata('llama.embedding_length', undefined)),
    );
    expect(missing.field).toBe('llama.embedding_length');
    const heads = await modelError(
      writeEditedModel(
        'f32',
        withMetadata('llama.attention.head_count_kv', { type: 'u32', value: 3 }),
      ),
    );
    expect(heads.field).toBe('llama.attention.head_count_kv');
    const eps = await modelError(
      writeEditedModel(
        'f32',
        withMetadata('llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: -1 }),
      ),
    );
    expect(eps.field).toBe('llama.attention.layer_norm_rms_epsilon');
  });

  it('names a missing tensor', async () => {
    const error = await modelError(writeEditedModel('q', withoutTensor('blk.1.ffn_up.weight')));
    expect(error.field).toBe('blk.1.ffn_up.weight');
    expect(error.message).toMatch(/missing from the file/);
  });

  it('names a tensor whose shape does not fit the hyperparameters', async () => {
    const error = await modelError(
      writeEditedModel('f32', withTensorShape('blk.0.attn_k.weight', [256, 256])),
    );
    expect(error.field).toBe('blk.0.attn_k.weight');
    expect(error.message).toContain(
      'ne [256, 256] does not match the hyperparameters, which give [256, 128]',
    );
  });

  it('names a tensor whose type its role cannot take, before reading any tensor', async () => {
    const bytes = retypeTensorId(writeGguf(tinyLlamaFile('q')), 'blk.1.attn_v.weight', 30);
    const error = await modelError(writeModelBytes(bytes));
    expect(error.field).toBe('blk.1.attn_v.weight');
    expect(error.message).toContain(
      'type bf16 has no Forge mat-vec kernel (types with one: f32, f16, q8_0, q4_K, q6_K)',
    );
    const embedding = await modelError(
      writeEditedModel('f32', withTensorType('token_embd.weight', 'q4_0')),
    );
    expect(embedding.message).toMatch(
      /token_embd\.weight: type q4_0 has no Forge embedding-row kernel/,
    );
    const tied = await modelError(
      writeModelBytes(
        retypeTensorId(
          writeGguf(withoutTensor('output.weight')(tinyLlamaFile('f32'))),
          'token_embd.weight',
          30,
        ),
      ),
    );
    expect(tied.message).toMatch(/token_embd\.weight: type bf16 has no Forge embedding-row kernel/);
  });

  it('names the tensor a truncated file cuts, and the bytes it needs', async () => {
    const bytes = writeGguf(tinyLlamaFile('q'));
    const error = await modelError(writeModelBytes(bytes.subarray(0, bytes.length - 1000)));
    expect(error.field).toBe('output.weight');
    expect(error.message).toMatch(
      /output\.weight: truncated: its q6_K ne \[256, 256\] needs bytes (\d+)\.\.(\d+), the file has \d+$/,
    );
  });

  it('refuses a block_count the tensors cannot hold at once, naming the first missing block', async () => {
    const path = writeEditedModel(
      'f32',
      withMetadata('llama.block_count', { type: 'u32', value: 10_000_000 }),
    );
    const error = await modelError(path);
    expect(error.field).toBe(`blk.${TINY_LLAMA_CONFIG.nLayer}.attn_norm.weight`);
    expect(error.message).toMatch(
      /missing from the file \(llama\.block_count is 10000000; the file has \d+ tensors\)$/,
    );
  });

  it('reads norm weights stored as f16, bf16, q8_0 or q4_0 as exact f32; refuses other types', async () => {
    const name = 'blk.0.ffn_norm.weight';
    for (const type of ['f16', 'q8_0', 'q4_0'] as const) {
      const file = withTensorType(name, type)(tinyLlamaFile('f32'));
      const stored = file.tensors.find((tensor) => tensor.name === name);
      const model = await readLlamaModel(writeModelBytes(writeGguf(file)));
      const norm = model.tensors.get(name);
      expect(norm?.type, type).toBe('f32');
      const values = new Float32Array(norm?.bytes.slice().buffer ?? new ArrayBuffer(0));
      const expected = dequantizeTensor({
        name,
        type,
        ne: [256],
        bytes: stored?.data ?? new Uint8Array(),
      });
      expect(Array.from(values), type).toEqual(Array.from(expected));
    }
    // bfloat16: the top halves of the f32 weights, stored under type id 30.
    const f32 = tinyLlamaFile('f32');
    const weights = f32.tensors.find((tensor) => tensor.name === name)?.data ?? new Uint8Array();
    const halves = new Uint16Array(
      new Uint32Array(weights.slice().buffer).map((bits) => bits >>> 16),
    );
    const asHalves = {
      ...f32,
      tensors: f32.tensors.map((t) =>
        t.name === name ? { ...t, type: 'f16' as const, data: new Uint8Array(halves.buffer) } : t,
      ),
    };
    const bf16 = await readLlamaModel(
      writeModelBytes(retypeTensorId(writeGguf(asHalves), name, 30)),
    );
    const widened = new Uint32Array(
      bf16.tensors.get(name)?.bytes.slice().buffer ?? new ArrayBuffer(0),
    );
    expect(Array.from(widened)).toEqual(Array.from(halves, (half) => half * 65536));
    const q4k = await modelError(
      writeModelBytes(retypeTensorId(writeGguf(tinyLlamaFile('f32')), 'output_norm.weight', 12)),
    );
    expect(q4k.message).toMatch(
      /output_norm\.weight: type q4_K cannot be a norm weight \(f32, or f16, bf16, q8_0, q4_0 converted exactly to f32\)$/,
    );
  });

  it('refuses hyperparameters that do not fit together', async () => {
    const edit = async (key: string, type: number, value: Uint8Array) =>
      modelError(
        writeModelBytes(
          encodeRawGguf(
            withRawPair(decodeRawGguf(writeGguf(tinyLlamaFile('f32'))), key, type, value),
          ),
        ),
      );
    const f32 = (value: number) => new Uint8Array(Float32Array.of(value).buffer);
    for (const [key, type, value, message] of [
      [
        'llama.attention.head_count',
        4,
        rawU32(3),
        /3 heads do not divide embedding_length 256, and no attention\.key_length is given$/,
      ],
      [
        'llama.attention.key_length',
        4,
        rawU32(63),
        /head_dim 63 is odd; rope rotates pairs of values$/,
      ],
      ['llama.attention.head_count_kv', 4, rawU32(3), /3 KV heads do not divide head_count 4$/],
      ['llama.vocab_size', 4, rawU32(0), /llama\.vocab_size: 0 is not a positive whole number$/],
      [
        'llama.vocab_size',
        4,
        rawU32(255),
        /llama\.vocab_size: 255 is not token_embd\.weight's 256 rows$/,
      ],
      [
        'llama.rope.freq_base',
        6,
        f32(Infinity),
        /llama\.rope\.freq_base: Infinity is not a finite positive number$/,
      ],
      [
        'llama.attention.layer_norm_rms_epsilon',
        6,
        f32(Number.NaN),
        /NaN is not a finite positive number$/,
      ],
      [
        'llama.block_count',
        8,
        new Uint8Array(8),
        /llama\.block_count: the string "" is not a positive whole number$/,
      ],
    ] as const) {
      const error = await edit(key, type, value);
      expect(error.field, key).toBe(key);
      expect(error.message, key).toMatch(message);
    }
  });

  it('takes a model without output.weight (tied embeddings)', async () => {
    const model = await readLlamaModel(writeEditedModel('f32', withoutTensor('output.weight')));
    expect(model.tensors.has('output.weight')).toBe(false);
    expect(model.tensors.has('token_embd.weight')).toBe(true);
  });
});
