// A small GGUF v3 writer for test fixtures (tiny models, malformed files): the product only reads
// GGUF (with @huggingface/gguf), so this lives with the test data and is never published.
import { ValidationError, f16Bits } from '@forge/ir';
import { QUANT_FORMATS, quantize, type QuantType } from '@forge/ir/gguf';

/** The tensor types the writer stores: plain floats and the quantized formats Forge decodes. */
export type GgufTensorType = 'f32' | 'f16' | QuantType;

/** ggml's type id of every GgufTensorType (GGUF's tensor type field). */
export const GGML_TYPE_IDS: Readonly<Record<GgufTensorType, number>> = {
  f32: 0,
  f16: 1,
  q4_0: QUANT_FORMATS.q4_0.ggmlTypeId,
  q8_0: QUANT_FORMATS.q8_0.ggmlTypeId,
  q4_K: QUANT_FORMATS.q4_K.ggmlTypeId,
  q6_K: QUANT_FORMATS.q6_K.ggmlTypeId,
};

/** A metadata value with its GGUF type; arrays hold one item type. */
export type GgufValue =
  | { readonly type: 'u32' | 'i32' | 'f32'; readonly value: number }
  | { readonly type: 'u64'; readonly value: bigint }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'u32[]' | 'i32[]' | 'f32[]'; readonly value: readonly number[] }
  | { readonly type: 'string[]'; readonly value: readonly string[] };

/** One tensor: ggml's ne order (ne[0] is the contiguous axis) and its stored bytes. */
export interface GgufTensor {
  readonly name: string;
  readonly ne: readonly number[];
  readonly type: GgufTensorType;
  readonly data: Uint8Array;
}

/** A whole file: metadata in write order, then tensors in write order. */
export interface GgufFile {
  readonly metadata: readonly (readonly [string, GgufValue])[];
  readonly tensors: readonly GgufTensor[];
  /** Data alignment in bytes (GGUF's default is 32); written as `general.alignment` when not 32 or when asked. */
  readonly alignment?: number;
}

// GGUF's value type ids (gguf.h enum gguf_type).
const VALUE_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10 } as const;

const invalid = (path: string, message: string): ValidationError =>
  new ValidationError([{ path, message }]);

/** Bytes of a tensor of `type` with shape `ne`; ne[0] must be whole blocks for a quantized type. */
export function ggufTensorBytes(type: GgufTensorType, ne: readonly number[], path = 'ne'): number {
  if (ne.length < 1 || ne.length > 4)
    throw invalid(path, `expected 1 to 4 dimensions, got ${ne.length}`);
  ne.forEach((size, d) => {
    if (!Number.isSafeInteger(size) || size < 1)
      throw invalid(`${path}[${d}]`, `expected a positive integer, got ${String(size)}`);
  });
  const count = ne.reduce((product, size) => product * size, 1);
  if (type === 'f32') return 4 * count;
  if (type === 'f16') return 2 * count;
  const { blockSize, blockBytes } = QUANT_FORMATS[type];
  const cols = ne[0] ?? 0;
  if (cols % blockSize !== 0)
    throw invalid(`${path}[0]`, `expected a multiple of ${blockSize} for ${type}, got ${cols}`);
  return (count / blockSize) * blockBytes;
}

/** Encodes float values (ggml row-major, ne[0] contiguous) as a tensor of `type`. */
export function encodeTensor(
  name: string,
  type: GgufTensorType,
  ne: readonly number[],
  values: Float32Array,
): GgufTensor {
  const count = ne.reduce((product, size) => product * size, 1);
  if (values.length !== count)
    throw invalid(
      `${name}.values`,
      `expected ${count} values for ne [${ne.join(', ')}], got ${values.length}`,
    );
  let data: Uint8Array;
  if (type === 'f32') {
    data = new Uint8Array(4 * count);
    const view = new DataView(data.buffer);
    values.forEach((value, i) => view.setFloat32(4 * i, value, true));
  } else if (type === 'f16') {
    data = new Uint8Array(2 * count);
    const view = new DataView(data.buffer);
    values.forEach((value, i) => view.setUint16(2 * i, f16Bits(value), true));
  } else {
    const cols = ne[0] ?? 1;
    data = quantize(type, values, count / cols, cols);
  }
  return { name, ne, type, data };
}

/** Grows a little-endian byte buffer. */
class ByteSink {
  private bytes = new Uint8Array(4096);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(2 * this.bytes.length, this.length + extra));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
  u32(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, value, true);
    this.length += 4;
  }
  i32(value: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, value, true);
    this.length += 4;
  }
  f32(value: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, value, true);
    this.length += 4;
  }
  u64(value: bigint | number): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(value), true);
    this.length += 8;
  }
  raw(data: Uint8Array): void {
    this.reserve(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }
  string(text: string): void {
    const encoded = new TextEncoder().encode(text);
    this.u64(encoded.length);
    this.raw(encoded);
  }
  padTo(alignment: number): void {
    const padding = (alignment - (this.length % alignment)) % alignment;
    this.raw(new Uint8Array(padding));
  }
  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  switch (value.type) {
    case 'u32':
    case 'i32':
    case 'f32':
      sink.u32(VALUE_TYPE[value.type]);
      sink[value.type](value.value);
      return;
    case 'u64':
      sink.u32(VALUE_TYPE.u64);
      sink.u64(value.value);
      return;
    case 'bool':
      sink.u32(VALUE_TYPE.bool);
      sink.raw(Uint8Array.of(value.value ? 1 : 0));
      return;
    case 'string':
      sink.u32(VALUE_TYPE.string);
      sink.string(value.value);
      return;
    case 'string[]':
      sink.u32(VALUE_TYPE.array);
      sink.u32(VALUE_TYPE.string);
      sink.u64(value.value.length);
      value.value.forEach((item) => sink.string(item));
      return;
    case 'u32[]':
    case 'i32[]':
    case 'f32[]': {
      const item = value.type.slice(0, 3) as 'u32' | 'i32' | 'f32';
      sink.u32(VALUE_TYPE.array);
      sink.u32(VALUE_TYPE[item]);
      sink.u64(value.value.length);
      value.value.forEach((number) => sink[item](number));
      return;
    }
  }
}

function checkValue(path: string, value: GgufValue): void {
  const numbers =
    value.type === 'u32' || value.type === 'i32' || value.type === 'f32'
      ? [value.value]
      : value.type === 'u32[]' || value.type === 'i32[]' || value.type === 'f32[]'
        ? value.value
        : [];
  const kind = value.type.slice(0, 3);
  numbers.forEach((number) => {
    const ok =
      kind === 'u32'
        ? Number.isInteger(number) && number >= 0 && number < 2 ** 32
        : kind === 'i32'
          ? Number.isInteger(number) && number >= -(2 ** 31) && number < 2 ** 31
          : Number.isFinite(number);
    if (!ok) throw invalid(path, `${String(number)} is not a ${kind}`);
  });
}

/**
 * The bytes of a GGUF v3 file, laid out as ggml's gguf writer does: header, metadata, tensor infos
 * (offsets relative to the data section), padding to the alignment, then each tensor's data padded
 * to the alignment (the last one too).
 */
export function writeGguf(file: GgufFile): Uint8Array {
  const alignment = file.alignment ?? 32;
  if (!Number.isSafeInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0)
    throw invalid('alignment', `expected a power of two, got ${String(alignment)}`);
  const keys = new Set<string>();
  file.metadata.forEach(([key, value], index) => {
    if (keys.has(key)) throw invalid(`metadata[${index}]`, `duplicate key '${key}'`);
    keys.add(key);
    checkValue(`metadata[${index}].value`, value);
    if (key === 'general.alignment' && (value.type !== 'u32' || value.value !== alignment))
      throw invalid(`metadata[${index}].value`, `general.alignment must be the u32 ${alignment}`);
  });
  const metadata: (readonly [string, GgufValue])[] = [...file.metadata];
  // Readers assume 32 when the key is absent, so any other alignment must be written.
  if (alignment !== 32 && !keys.has('general.alignment'))
    metadata.push(['general.alignment', { type: 'u32', value: alignment }]);

  const names = new Set<string>();
  const offsets: number[] = [];
  let offset = 0;
  file.tensors.forEach((tensor, index) => {
    const path = `tensors[${index}]`;
    if (names.has(tensor.name)) throw invalid(`${path}.name`, `duplicate tensor '${tensor.name}'`);
    names.add(tensor.name);
    const bytes = ggufTensorBytes(tensor.type, tensor.ne, `${path}.ne`);
    if (tensor.data.length !== bytes)
      throw invalid(
        `${path}.data`,
        `expected ${bytes} bytes for ${tensor.type} [${tensor.ne.join(', ')}], got ${tensor.data.length}`,
      );
    offsets.push(offset);
    offset += Math.ceil(bytes / alignment) * alignment;
  });

  const sink = new ByteSink();
  sink.raw(new TextEncoder().encode('GGUF'));
  sink.u32(3);
  sink.u64(file.tensors.length);
  sink.u64(metadata.length);
  for (const [key, value] of metadata) {
    sink.string(key);
    writeValue(sink, value);
  }
  file.tensors.forEach((tensor, index) => {
    sink.string(tensor.name);
    sink.u32(tensor.ne.length);
    tensor.ne.forEach((size) => sink.u64(size));
    sink.u32(GGML_TYPE_IDS[tensor.type]);
    sink.u64(offsets[index] ?? 0);
  });
  sink.padTo(alignment);
  for (const tensor of file.tensors) {
    sink.raw(tensor.data);
    sink.padTo(alignment);
  }
  return sink.result();
}
