// The GGUF header against hostile files: each lie refused in one line naming what lies, after
// reading no more of the file than its header (a Blob that counts what is read).
import { describe, expect, it } from 'vitest';
import {
  decodeRawGguf,
  encodeRawGguf,
  rawU32,
  tinyLlamaGguf,
  withRawPair,
  writeGguf,
  type RawGguf,
} from '@forge/test-fixtures';
import { ModelError } from '../model-error.js';
import { GGML_TYPES, ggmlTypeName } from './ggml-types.js';
import { readGgufHeader } from './gguf-header.js';

/** A Blob over `bytes` that counts the bytes its slices hand out. */
function countingBlob(bytes: Uint8Array): { blob: Blob; read: () => number } {
  const inner = new Blob([bytes]);
  let read = 0;
  const blob = {
    size: inner.size,
    slice(start?: number, end?: number) {
      const part = inner.slice(start, end);
      return {
        size: part.size,
        arrayBuffer: async () => {
          read += part.size;
          return part.arrayBuffer();
        },
      };
    },
  };
  return { blob: blob as unknown as Blob, read: () => read };
}

const valid = writeGguf(tinyLlamaGguf('f32'));
const raw = decodeRawGguf(valid);

/** The one-line ModelError the header of `bytes` gets, and the bytes read to find it. */
async function refusal(
  bytes: Uint8Array,
): Promise<{ message: string; field: string; read: number }> {
  const { blob, read } = countingBlob(bytes);
  const error: unknown = await readGgufHeader(blob, 'm.gguf').then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelError);
  const { message, field } = error as ModelError;
  expect(message).not.toContain('\n');
  return { message, field, read: read() };
}

const edited = (edit: (file: RawGguf) => RawGguf) => encodeRawGguf(edit(raw));

describe('readGgufHeader', () => {
  it('reads the tiny model: metadata, tensors placed inside the file in order', async () => {
    const { blob, read } = countingBlob(valid);
    const header = await readGgufHeader(blob, 'm.gguf');
    expect(header.version).toBe(3);
    expect(header.tensors.map((tensor) => tensor.name)).toEqual(raw.tensors.map((t) => t.name));
    expect(header.metadata.get('general.architecture')).toEqual({ type: 'string', value: 'llama' });
    const last = header.tensors.at(-1);
    expect(last === undefined ? 0 : last.start + last.bytes).toBeLessThanOrEqual(valid.length);
    expect(header.dataOffset % header.alignment).toBe(0);
    // The header fits in the first 1 MiB window: that window is all that is read.
    expect(valid.length).toBeGreaterThan(1 << 20);
    expect(read()).toBe(1 << 20);
  });

  it('refuses counts the file cannot hold, reading only what it has (24 bytes: no 386 MB)', async () => {
    const header = valid.slice(0, 24);
    new DataView(header.buffer).setBigUint64(8, 1000n, true);
    const tensors = await refusal(header);
    expect(tensors.message).toMatch(
      /tensor count 1000 needs at least 33000 bytes; 8 are left in the file$/,
    );
    expect(tensors.read).toBe(24);
    const pairs = await refusal(edited((file) => ({ ...file, kvCount: 2n ** 62n })));
    expect(pairs.message).toMatch(/metadata count 4611686018427387904 needs at least/);
    // Counts within the bytes, but more tensors than infos: the data is read as infos, and refused.
    const more = await refusal(edited((file) => ({ ...file, tensorCount: 30000n })));
    expect(more.message).toMatch(/tensor 21: the name is empty$/);
  });

  it('refuses a truncated header, naming where it ends', async () => {
    const { dataOffset } = await readGgufHeader(new Blob([valid]), 'm.gguf');
    const cut = await refusal(valid.subarray(0, dataOffset - 40));
    expect(cut.message).toMatch(/^m\.gguf: truncated: the file ends inside /);
    expect(cut.read).toBe(dataOffset - 40);
  });

  it('refuses tensor data past the end of the file, naming the tensor and its bytes', async () => {
    const cut = await refusal(valid.subarray(0, valid.length - 1000));
    expect(cut.field).toBe('output.weight');
    expect(cut.message).toMatch(
      /output\.weight: truncated: its f32 ne \[256, 256\] needs bytes \d+\.\.\d+, the file has \d+$/,
    );
    const far = await refusal(
      edited((file) => ({
        ...file,
        tensors: file.tensors.map((t, i) => (i === 0 ? { ...t, offset: 2n ** 63n } : t)),
      })),
    );
    expect(far.field).toBe('token_embd.weight');
    expect(far.message).toMatch(
      /truncated: its f32 ne \[256, 256\] needs bytes 9223372036854777600\.\.\d+, the file has \d+$/,
    );
  });

  it('refuses alignment that is not a power of two and a multiple of 8, or not a u32', async () => {
    for (const [type, value, message] of [
      [4, rawU32(48), /general\.alignment: 48 is not a power of two and a multiple of 8/],
      [4, rawU32(4), /general\.alignment: 4 is not a power of two/],
      [4, rawU32(0), /general\.alignment: 0 is not/],
      [
        10,
        new Uint8Array(new BigUint64Array([2n ** 40n]).buffer),
        /general\.alignment: is a u64, not a u32/,
      ],
    ] as const) {
      const { field, message: text } = await refusal(
        edited((file) => withRawPair(file, 'general.alignment', type, value)),
      );
      expect(field).toBe('general.alignment');
      expect(text).toMatch(message);
    }
  });

  it('refuses two tensors with one name, and two pairs with one key', async () => {
    const twin = await refusal(
      edited((file) => ({
        ...file,
        tensors: file.tensors.map((t, i) => (i === 2 ? { ...t, name: 'token_embd.weight' } : t)),
      })),
    );
    expect(twin.message).toMatch(/token_embd\.weight: two tensors have this name$/);
    const key = await refusal(
      edited((file) => ({
        ...file,
        pairs: [...file.pairs, file.pairs[0]!],
        kvCount: file.kvCount + 1n,
      })),
    );
    expect(key.message).toMatch(/general\.architecture: the key appears twice$/);
  });

  it('refuses dimensions out of 1..4, a zero ne, unknown types, misaligned or overlapping data', async () => {
    const first = (change: Partial<RawGguf['tensors'][number]>) =>
      edited((file) => ({
        ...file,
        tensors: file.tensors.map((t, i) => (i === 0 ? { ...t, ...change } : t)),
      }));
    expect((await refusal(first({ ne: [] }))).message).toMatch(/0 dimensions; a tensor has 1 to 4/);
    expect((await refusal(first({ ne: [1n, 1n, 1n, 1n, 1n] }))).message).toMatch(/5 dimensions/);
    expect((await refusal(first({ ne: [256n, 0n] }))).message).toMatch(/ne\[1\] is 0/);
    expect((await refusal(first({ type: 31 }))).message).toMatch(/type id 31 is not a ggml type/);
    expect((await refusal(first({ ne: [100n, 2n], type: 12 }))).message).toMatch(
      /ne \[100, 2\]: ne\[0\] is not whole q4_K blocks of 256/,
    );
    expect((await refusal(first({ offset: 4n }))).message).toMatch(
      /data offset 4 is not a multiple of the alignment 32/,
    );
    const overlap = await refusal(
      edited((file) => ({
        ...file,
        tensors: file.tensors.map((t, i) => (i === 1 ? { ...t, offset: 0n } : t)),
      })),
    );
    expect(overlap.message).toMatch(/overlaps token_embd\.weight's \(bytes \d+\.\.\d+\)$/);
  });

  it('refuses oversized names and keys, arrays of arrays, unknown value types, other versions', async () => {
    expect(
      (
        await refusal(
          edited((file) => ({
            ...file,
            tensors: [{ ...file.tensors[0]!, name: 'n'.repeat(64) }, ...file.tensors.slice(1)],
          })),
        )
      ).message,
    ).toMatch(/tensor 0: name length 64 is over the limit of 63/);
    expect((await refusal(edited((file) => ({ ...file, version: 1 })))).message).toMatch(
      /GGUF version 1 is not supported \(versions 2 and 3 are\)/,
    );
    expect((await refusal(edited((file) => ({ ...file, magic: 'GGML' })))).message).toMatch(
      /not a GGUF file/,
    );
    const nested = new Uint8Array(12);
    new DataView(nested.buffer).setUint32(0, 9, true);
    expect(
      (await refusal(edited((file) => withRawPair(file, 'x.nested', 9, nested)))).message,
    ).toMatch(/x\.nested: arrays of arrays are not supported/);
    expect(
      (await refusal(edited((file) => withRawPair(file, 'x.odd', 13, new Uint8Array(4))))).message,
    ).toMatch(/x\.odd: value type 13 is not a GGUF type/);
    const hugeArray = new Uint8Array(12);
    new DataView(hugeArray.buffer).setUint32(0, 8, true);
    new DataView(hugeArray.buffer).setBigUint64(4, 2n ** 40n, true);
    expect(
      (await refusal(edited((file) => withRawPair(file, 'x.huge', 9, hugeArray)))).message,
    ).toMatch(/x\.huge: array length 1099511627776 needs at least 8796093022208 bytes/);
  });

  it("reads a header past its first window, and no more than twice the header's bytes", async () => {
    const tokens = Array.from({ length: 200_000 }, (_, i) => `token-${i}`);
    const big = encodeRawGguf(
      withRawPair(
        raw,
        'tokenizer.ggml.tokens',
        9,
        (() => {
          const body = tokens.map((token) => {
            const text = new TextEncoder().encode(token);
            const item = new Uint8Array(8 + text.length);
            new DataView(item.buffer).setBigUint64(0, BigInt(text.length), true);
            item.set(text, 8);
            return item;
          });
          const head = new Uint8Array(12);
          new DataView(head.buffer).setUint32(0, 8, true);
          new DataView(head.buffer).setBigUint64(4, BigInt(tokens.length), true);
          return new Uint8Array(Buffer.concat([head, ...body]));
        })(),
      ),
    );
    const { blob, read } = countingBlob(big);
    const header = await readGgufHeader(blob, 'big.gguf');
    const value = header.metadata.get('tokenizer.ggml.tokens');
    expect(value?.type === 'array' ? value.value.length : 0).toBe(200_000);
    expect(header.dataOffset).toBeGreaterThan(1 << 20);
    // Windows of 1, 2 and 4 MiB: under 2 × (header + 1 MiB).
    expect(read()).toBeLessThan(2 * header.dataOffset + (1 << 21));
  });
});

describe('ggml types', () => {
  it("names ids as ggml_type_name does, block geometry from ggml's traits", () => {
    expect([0, 1, 2, 8, 12, 14, 30, 23, 39, 31].map(ggmlTypeName)).toEqual([
      'f32',
      'f16',
      'q4_0',
      'q8_0',
      'q4_K',
      'q6_K',
      'bf16',
      'iq4_xs',
      'mxfp4',
      'type 31',
    ]);
    expect(GGML_TYPES.get(12)).toMatchObject({ blockSize: 256, blockBytes: 144 });
    expect(GGML_TYPES.get(14)).toMatchObject({ blockSize: 256, blockBytes: 210 });
    expect(GGML_TYPES.get(13)).toMatchObject({ blockSize: 256, blockBytes: 176 });
    expect(GGML_TYPES.get(11)).toMatchObject({ blockSize: 256, blockBytes: 110 });
  });
});
