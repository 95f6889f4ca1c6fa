import { describe, expect, it } from 'vitest';
import {
  TINY_LLAMA_CONFIG,
  retypeTensorId,
  tinyLlamaTensorType,
  withMetadata,
  withTensorShape,
  withoutTensor,
  writeGguf,
} from '@forge/test-fixtures';
import { ModelError, parseLlamaModel, readLlamaModel, tensorBytes } from './index.js';
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
    expect((await modelError(path)).message).toMatch(/not a readable GGUF file/);
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

  it('names a tensor of a type Forge cannot read', async () => {
    const bytes = retypeTensorId(writeGguf(tinyLlamaFile('q')), 'blk.1.attn_v.weight', 30);
    const error = await modelError(writeModelBytes(bytes));
    expect(error.field).toBe('blk.1.attn_v.weight');
    expect(error.message).toContain('type bf16 is not supported');
  });

  it('names the tensor a truncated file cuts', async () => {
    const bytes = writeGguf(tinyLlamaFile('q'));
    const error = await modelError(writeModelBytes(bytes.subarray(0, bytes.length - 1000)));
    expect(error.field).toBe('output.weight');
    expect(error.message).toMatch(/the file ends 1000 bytes before/);
  });

  it('takes a model without output.weight (tied embeddings)', async () => {
    const model = await readLlamaModel(writeEditedModel('f32', withoutTensor('output.weight')));
    expect(model.tensors.has('output.weight')).toBe(false);
    expect(model.tensors.has('token_embd.weight')).toBe(true);
  });
});
