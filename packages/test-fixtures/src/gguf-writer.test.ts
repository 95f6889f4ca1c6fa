// The writer against two readers: ggml's own file (rewritten byte for byte) and @huggingface/gguf
// (metadata, shapes, types, offsets and tensor bytes read back).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GGUFValueType, gguf } from '@huggingface/gguf';
import { ValidationError, f16FromBits } from '@forge/ir';
import { dequantize } from '@forge/ir/gguf';
import { Rng, fillUniform } from '@forge/ir/kernels';
import { afterAll, describe, expect, it } from 'vitest';
import {
  GGML_TYPE_IDS,
  encodeTensor,
  ggufTensorBytes,
  writeGguf,
  type GgufFile,
  type GgufTensorType,
  type GgufValue,
} from './gguf-writer.js';

const ORACLE = new URL('../../../fixtures/ggml/forge-oracle.gguf', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'forge-gguf-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `bytes` to a temporary file and parses it as a reader would. */
async function parse(bytes: Uint8Array, name: string) {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return gguf(path, { allowLocalFile: true, typedMetadata: true });
}

const TYPE_OF_VALUE: Readonly<Record<number, 'u32' | 'f32' | 'string'>> = {
  [GGUFValueType.UINT32]: 'u32',
  [GGUFValueType.FLOAT32]: 'f32',
  [GGUFValueType.STRING]: 'string',
};
const TYPE_OF_TENSOR = new Map<number, GgufTensorType>(
  Object.entries(GGML_TYPE_IDS).map(([type, id]) => [id, type as GgufTensorType]),
);

describe('writeGguf', () => {
  it("rewrites ggml's own GGUF file (forge-oracle.gguf) byte for byte", async () => {
    const original = new Uint8Array(readFileSync(ORACLE));
    const parsed = await gguf(ORACLE.pathname, { allowLocalFile: true, typedMetadata: true });
    const metadata = Object.entries(parsed.typedMetadata)
      .filter(([key]) => !['version', 'tensor_count', 'kv_count'].includes(key))
      .map(([key, entry]): [string, GgufValue] => {
        const { value, type } = entry;
        const subType = 'subType' in entry ? entry.subType : undefined;
        if (type === GGUFValueType.ARRAY && subType === GGUFValueType.STRING)
          return [key, { type: 'string[]', value: value as string[] }];
        const kind = TYPE_OF_VALUE[type];
        if (kind === undefined) throw new Error(`oracle key ${key} has value type ${type}`);
        return [
          key,
          kind === 'string'
            ? { type: kind, value: String(value) }
            : { type: kind, value: Number(value) },
        ];
      });
    const tensors = parsed.tensorInfos.map((info) => {
      const type = TYPE_OF_TENSOR.get(info.dtype);
      if (type === undefined) throw new Error(`oracle tensor ${info.name} has type ${info.dtype}`);
      const start = Number(parsed.tensorDataOffset + info.offset);
      const ne = info.shape.map(Number);
      const data = original.subarray(start, start + ggufTensorBytes(type, ne));
      return { name: info.name, ne, type, data };
    });
    expect(tensors.map((tensor) => tensor.type)).toEqual(['q4_K', 'q6_K', 'f32']);
    expect(metadata.map(([, value]) => value.type)).toContain('string[]');
    expect(writeGguf({ metadata, tensors })).toEqual(original);
  });

  // Odd sizes, so every tensor but the quantized ones needs padding before the next.
  const rng = new Rng(15);
  const source = (count: number) => fillUniform(new Float32Array(count), rng, 2);
  const file: GgufFile = {
    metadata: [
      ['general.architecture', { type: 'string', value: 'llama' }],
      ['test.u32', { type: 'u32', value: 4_000_000_000 }],
      ['test.i32', { type: 'i32', value: -7 }],
      ['test.f32', { type: 'f32', value: 0.1 }],
      ['test.u64', { type: 'u64', value: 2n ** 40n }],
      ['test.bool', { type: 'bool', value: true }],
      ['test.tokens', { type: 'string[]', value: ['<s>', 'é', ''] }],
      ['test.u32s', { type: 'u32[]', value: [1, 2, 3] }],
      ['test.f32s', { type: 'f32[]', value: [0.5, -1.5] }],
      ['general.alignment', { type: 'u32', value: 32 }],
    ],
    tensors: [
      encodeTensor('a.f32', 'f32', [3], source(3)),
      encodeTensor('b.f16', 'f16', [5, 3], source(15)),
      encodeTensor('c.q8_0', 'q8_0', [32, 3], source(96)),
      encodeTensor('d.q4_K', 'q4_K', [256, 2], source(512)),
      encodeTensor('e.q6_K', 'q6_K', [512, 1], source(512)),
      encodeTensor('f.f32', 'f32', [3, 1, 2], source(6)),
    ],
  };

  it('writes metadata, shapes, types, aligned offsets and tensor bytes that @huggingface/gguf reads back', async () => {
    const bytes = writeGguf(file);
    const parsed = await parse(bytes, 'every-type.gguf');
    const meta = parsed.typedMetadata;
    expect(meta.version.value).toBe(3);
    expect(meta.tensor_count.value).toBe(6n);
    expect(meta.kv_count.value).toBe(10n);
    expect(meta['test.u32']).toEqual({ value: 4_000_000_000, type: GGUFValueType.UINT32 });
    expect(meta['test.i32']).toEqual({ value: -7, type: GGUFValueType.INT32 });
    expect(meta['test.f32']).toEqual({ value: Math.fround(0.1), type: GGUFValueType.FLOAT32 });
    expect(meta['test.u64']).toEqual({ value: 2n ** 40n, type: GGUFValueType.UINT64 });
    expect(meta['test.bool']).toEqual({ value: true, type: GGUFValueType.BOOL });
    expect(meta['test.tokens']).toEqual({
      value: ['<s>', 'é', ''],
      type: GGUFValueType.ARRAY,
      subType: GGUFValueType.STRING,
    });
    expect(meta['test.u32s']?.value).toEqual([1, 2, 3]);
    expect(meta['test.f32s']?.value).toEqual([0.5, -1.5]);
    expect(meta['general.alignment']?.value).toBe(32);
    expect(Number(parsed.tensorDataOffset) % 32).toBe(0);

    const expectedOffsets = [0, 32, 64, 0, 0, 0];
    let end = 0;
    file.tensors.forEach((tensor, index) => {
      const info = parsed.tensorInfos[index];
      expect(info?.name).toBe(tensor.name);
      expect(info?.shape).toEqual(tensor.ne.map(BigInt));
      expect(info?.dtype).toBe(GGML_TYPE_IDS[tensor.type]);
      const offset = Number(info?.offset);
      expect(offset % 32).toBe(0);
      expect(offset).toBeGreaterThanOrEqual(end);
      if (index < 3) expect(offset).toBe(expectedOffsets[index]);
      const start = Number(parsed.tensorDataOffset) + offset;
      expect(bytes.subarray(start, start + tensor.data.length)).toEqual(tensor.data);
      end = offset + tensor.data.length;
    });
    // ggml pads the last tensor too, so the file ends on the alignment.
    expect(bytes.length).toBe(Number(parsed.tensorDataOffset) + Math.ceil(end / 32) * 32);
  });

  it('encodes f32 exactly, f16 to nearest and the quantized types as the @forge/ir/gguf codecs', () => {
    const values = source(512);
    const view = (data: Uint8Array) => new DataView(data.buffer, data.byteOffset, data.byteLength);
    const f32 = encodeTensor('w', 'f32', [256, 2], values).data;
    expect(Float32Array.from({ length: 512 }, (_, i) => view(f32).getFloat32(4 * i, true))).toEqual(
      values,
    );
    const f16 = encodeTensor('w', 'f16', [256, 2], values).data;
    for (let i = 0; i < 512; i++) {
      const half = f16FromBits(view(f16).getUint16(2 * i, true));
      expect(Math.abs(half - (values[i] ?? 0))).toBeLessThanOrEqual(2 ** -11 * 2);
    }
    const q = encodeTensor('w', 'q6_K', [256, 2], values).data;
    const back = dequantize('q6_K', q, 2, 256);
    back.forEach((value, i) => expect(Math.abs(value - (values[i] ?? 0))).toBeLessThan(0.05));
  });

  const error = (mutate: (file: GgufFile) => GgufFile): ValidationError => {
    try {
      writeGguf(mutate(file));
    } catch (caught) {
      if (caught instanceof ValidationError) return caught;
      throw caught;
    }
    throw new Error('writeGguf accepted a bad file');
  };

  it('names the field of a bad file in a ValidationError', () => {
    const tensors = file.tensors;
    expect(
      error((f) => ({ ...f, tensors: [{ ...tensors[1]!, data: new Uint8Array(4) }] })).path,
    ).toBe('tensors[0].data');
    expect(error((f) => ({ ...f, tensors: [{ ...tensors[3]!, ne: [128, 4] }] })).path).toBe(
      'tensors[0].ne[0]',
    );
    expect(error((f) => ({ ...f, tensors: [tensors[0]!, tensors[0]!] })).path).toBe(
      'tensors[1].name',
    );
    expect(
      error((f) => ({ ...f, metadata: [...f.metadata, ['test.u32', { type: 'u32', value: 1 }]] }))
        .path,
    ).toBe('metadata[10]');
    expect(error((f) => ({ ...f, metadata: [['x', { type: 'u32', value: -1 }]] })).path).toBe(
      'metadata[0].value',
    );
    expect(error((f) => ({ ...f, alignment: 24 })).path).toBe('alignment');
    expect(error((f) => ({ ...f, alignment: 64 })).path).toBe('metadata[9].value');
  });

  it('writes general.alignment itself when the alignment is not the default', async () => {
    const parsed = await parse(
      writeGguf({ metadata: [], tensors: [file.tensors[0]!, file.tensors[1]!], alignment: 64 }),
      'align-64.gguf',
    );
    expect(parsed.typedMetadata['general.alignment']?.value).toBe(64);
    expect(parsed.tensorInfos.map((info) => Number(info.offset))).toEqual([0, 64]);
    expect(Number(parsed.tensorDataOffset) % 64).toBe(0);
  });
});
