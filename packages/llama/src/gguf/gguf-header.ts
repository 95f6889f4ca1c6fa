// The GGUF header (magic, version, metadata, tensor infos), parsed from untrusted bytes: every count
// and length is checked against the bytes the file really has before anything is made for it, so a
// malformed file costs time and memory of the order of its header, whatever it claims.
import { ModelError } from '../model-error.js';
import { GGML_TYPES, type GgmlType } from './ggml-types.js';

/** A metadata scalar: integers of up to 32 bits and floats as numbers, 64-bit integers as bigints. */
export type GgufScalar = number | bigint | boolean | string;

/** A metadata value's GGUF type (gguf.h enum gguf_type, by name). */
export type GgufValueType =
  | 'u8'
  | 'i8'
  | 'u16'
  | 'i16'
  | 'u32'
  | 'i32'
  | 'f32'
  | 'bool'
  | 'string'
  | 'array'
  | 'u64'
  | 'i64'
  | 'f64';

/** One metadata value: a scalar, or an array of scalars of one `itemType`. */
export type GgufMetadataValue =
  | { readonly type: Exclude<GgufValueType, 'array'>; readonly value: GgufScalar }
  | {
      readonly type: 'array';
      readonly itemType: Exclude<GgufValueType, 'array'>;
      readonly value: readonly GgufScalar[];
    };

/** One tensor's place in the file, checked: inside the file, aligned, overlapping no other. */
export interface GgufTensorInfo {
  readonly name: string;
  /** ggml's ne, ne[0] contiguous; 1 to 4 dimensions, none zero. */
  readonly ne: readonly number[];
  readonly type: GgmlType;
  /** Absolute byte offset of the tensor's data in the file. */
  readonly start: number;
  readonly bytes: number;
}

/** A GGUF file's header, every part of it checked against the file's real size. */
export interface GgufHeader {
  readonly version: number;
  readonly metadata: ReadonlyMap<string, GgufMetadataValue>;
  /** In file order; names unique. */
  readonly tensors: readonly GgufTensorInfo[];
  readonly alignment: number;
  /** Absolute offset where tensor data begins. */
  readonly dataOffset: number;
  readonly fileBytes: number;
}

/** GGUF's limits that bound what a header may declare. */
export const GGUF_LIMITS = {
  /** ggml's GGML_MAX_DIMS. */
  maxDimensions: 4,
  /** ggml's GGML_MAX_NAME (64) less the terminating zero. */
  maxTensorNameBytes: 63,
  /** The GGUF specification's bound on a key. */
  maxKeyBytes: 65535,
  /** Alignment when `general.alignment` is absent. */
  defaultAlignment: 32,
} as const;

// Value type ids in gguf.h order, with the bytes each scalar takes (a string at least its length).
const VALUE_TYPES: readonly (readonly [Exclude<GgufValueType, 'array'> | 'array', number])[] = [
  ['u8', 1],
  ['i8', 1],
  ['u16', 2],
  ['i16', 2],
  ['u32', 4],
  ['i32', 4],
  ['f32', 4],
  ['bool', 1],
  ['string', 8],
  ['array', 12],
  ['u64', 8],
  ['i64', 8],
  ['f64', 8],
];

// The least bytes a key-value pair (a 1-byte key, a 1-byte value) and a tensor info (a 1-byte
// name, one dimension) take: declared counts are bounded by the bytes left divided by these.
const MIN_KV_BYTES = 8 + 1 + 4 + 1;
const MIN_TENSOR_INFO_BYTES = 8 + 1 + 4 + 8 + 4 + 8;

/** Thrown inside the parse when the window read so far ends before the bytes it needs. */
export class NeedMoreBytes {
  constructor(readonly until: number) {}
}

const utf8 = new TextDecoder('utf-8');

/** Reads little-endian values from a window of the file's first bytes. */
class Cursor {
  position = 0;
  /** What is being read, for a truncation message. */
  where = 'the header';
  private readonly view: DataView;
  constructor(
    private readonly bytes: Uint8Array,
    readonly fileBytes: number,
    readonly file: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get left(): number {
    return this.fileBytes - this.position;
  }

  fail(field: string, detail: string): never {
    throw new ModelError(this.file, field, detail);
  }

  /** Advances over `count` bytes, returning where they start. */
  take(count: number): number {
    const start = this.position;
    const end = start + count;
    if (end > this.fileBytes)
      this.fail(
        '',
        `truncated: the file ends inside ${this.where} (byte ${start} + ${count} of ${this.fileBytes})`,
      );
    if (end > this.bytes.length) throw new NeedMoreBytes(end);
    this.position = end;
    return start;
  }

  u32(): number {
    return this.view.getUint32(this.take(4), true);
  }

  u64(): bigint {
    return this.view.getBigUint64(this.take(8), true);
  }

  /** A u64 count of things of at least `each` bytes, which the bytes left after it must hold. */
  count(each: number, field: string, what: string): number {
    const room = Math.floor((this.left - 8) / each);
    const value = this.u64();
    if (value > BigInt(room))
      this.fail(
        field,
        `${what} ${value} needs at least ${value * BigInt(each)} bytes; ${this.left} are left in the file`,
      );
    return Number(value);
  }

  /** A string of at most `maxBytes` (the format's limit for what it names). */
  string(field: string, maxBytes: number, what: string): string {
    const length = this.count(1, field, `${what} length`);
    if (length > maxBytes)
      this.fail(field, `${what} length ${length} is over the limit of ${maxBytes}`);
    const start = this.take(length);
    return utf8.decode(this.bytes.subarray(start, start + length));
  }

  scalar(type: Exclude<GgufValueType, 'array'>, field: string): GgufScalar {
    const view = this.view;
    switch (type) {
      case 'u8':
        return view.getUint8(this.take(1));
      case 'i8':
        return view.getInt8(this.take(1));
      case 'u16':
        return view.getUint16(this.take(2), true);
      case 'i16':
        return view.getInt16(this.take(2), true);
      case 'u32':
        return view.getUint32(this.take(4), true);
      case 'i32':
        return view.getInt32(this.take(4), true);
      case 'f32':
        return view.getFloat32(this.take(4), true);
      case 'bool':
        return view.getUint8(this.take(1)) !== 0;
      case 'string':
        return this.string(field, Number.MAX_SAFE_INTEGER, 'string');
      case 'u64':
        return view.getBigUint64(this.take(8), true);
      case 'i64':
        return view.getBigInt64(this.take(8), true);
      case 'f64':
        return view.getFloat64(this.take(8), true);
    }
  }
}

function valueType(cursor: Cursor, key: string): readonly [GgufValueType, number] {
  const id = cursor.u32();
  const type = VALUE_TYPES[id];
  if (type === undefined) cursor.fail(key, `value type ${id} is not a GGUF type (0 to 12)`);
  return type;
}

function readValue(cursor: Cursor, key: string): GgufMetadataValue {
  const [type] = valueType(cursor, key);
  if (type !== 'array') return { type, value: cursor.scalar(type, key) };
  const [itemType, itemBytes] = valueType(cursor, key);
  if (itemType === 'array') cursor.fail(key, 'arrays of arrays are not supported');
  const length = cursor.count(itemBytes, key, 'array length');
  const value: GgufScalar[] = [];
  for (let i = 0; i < length; i++) value.push(cursor.scalar(itemType, key));
  return { type, itemType, value };
}

/** `value` rounded up to a multiple of `alignment`. */
const alignUp = (value: number, alignment: number): number =>
  Math.ceil(value / alignment) * alignment;

function alignmentOf(cursor: Cursor, metadata: ReadonlyMap<string, GgufMetadataValue>): number {
  const entry = metadata.get('general.alignment');
  if (entry === undefined) return GGUF_LIMITS.defaultAlignment;
  const value = entry.value;
  if (entry.type !== 'u32' || typeof value !== 'number')
    cursor.fail('general.alignment', `is a ${entry.type}, not a u32`);
  if (value < 8 || (value & (value - 1)) !== 0)
    cursor.fail(
      'general.alignment',
      `${value} is not a power of two and a multiple of 8 (the GGUF rule)`,
    );
  return value;
}

interface RawTensorInfo {
  readonly name: string;
  readonly ne: readonly bigint[];
  readonly type: GgmlType;
  readonly offset: bigint;
}

function readTensorInfo(cursor: Cursor, index: number, names: Set<string>): RawTensorInfo {
  cursor.where = `tensor info ${index}`;
  const name = cursor.string(`tensor ${index}`, GGUF_LIMITS.maxTensorNameBytes, 'name');
  if (name === '') cursor.fail(`tensor ${index}`, 'the name is empty');
  if (names.has(name)) cursor.fail(name, 'two tensors have this name');
  names.add(name);
  cursor.where = `the tensor info of ${name}`;
  const dimensions = cursor.u32();
  if (dimensions < 1 || dimensions > GGUF_LIMITS.maxDimensions)
    cursor.fail(name, `${dimensions} dimensions; a tensor has 1 to ${GGUF_LIMITS.maxDimensions}`);
  const ne: bigint[] = [];
  for (let axis = 0; axis < dimensions; axis++) {
    const size = cursor.u64();
    if (size === 0n) cursor.fail(name, `ne[${axis}] is 0`);
    ne.push(size);
  }
  const id = cursor.u32();
  const type = GGML_TYPES.get(id);
  if (type === undefined) cursor.fail(name, `type id ${id} is not a ggml type`);
  return { name, ne, type, offset: cursor.u64() };
}

/** Places a tensor's data: whole blocks, aligned, inside the file; its bytes computed in bigints. */
function placeTensor(
  cursor: Cursor,
  raw: RawTensorInfo,
  alignment: number,
  dataOffset: number,
): GgufTensorInfo {
  const { name, ne, type, offset } = raw;
  const shape = `ne [${ne.join(', ')}]`;
  if ((ne[0] ?? 0n) % BigInt(type.blockSize) !== 0n)
    cursor.fail(name, `${shape}: ne[0] is not whole ${type.name} blocks of ${type.blockSize}`);
  const count = ne.reduce((product, size) => product * size, 1n);
  const bytes = (count / BigInt(type.blockSize)) * BigInt(type.blockBytes);
  if (offset % BigInt(alignment) !== 0n)
    cursor.fail(name, `data offset ${offset} is not a multiple of the alignment ${alignment}`);
  const start = BigInt(dataOffset) + offset;
  const end = start + bytes;
  if (end > BigInt(cursor.fileBytes))
    cursor.fail(
      name,
      `truncated: its ${type.name} ${shape} needs bytes ${start}..${end}, the file has ${cursor.fileBytes}`,
    );
  return { name, ne: ne.map(Number), type, start: Number(start), bytes: Number(bytes) };
}

/**
 * Parses and checks the header in `bytes`, the first bytes of a `fileBytes`-byte file named `file`.
 * Throws a ModelError (one line, naming the key or tensor) for anything malformed, and
 * NeedMoreBytes when the header runs past `bytes` but not past the file (readGgufHeader retries).
 */
export function parseGgufHeader(bytes: Uint8Array, fileBytes: number, file: string): GgufHeader {
  const cursor = new Cursor(bytes, fileBytes, file);
  if (fileBytes < 4 || utf8.decode(bytes.subarray(0, 4)) !== 'GGUF')
    cursor.fail('', 'not a GGUF file (it does not start with the magic "GGUF")');
  cursor.take(4);
  const version = cursor.u32();
  if (version !== 2 && version !== 3)
    cursor.fail('', `GGUF version ${version} is not supported (versions 2 and 3 are)`);
  // The tensor count is read first, then the metadata count: each bounded by the bytes after both.
  const tensorCount = cursor.count(MIN_TENSOR_INFO_BYTES, '', 'tensor count');
  const kvCount = cursor.count(MIN_KV_BYTES, '', 'metadata count');
  if (tensorCount * MIN_TENSOR_INFO_BYTES + kvCount * MIN_KV_BYTES > cursor.left)
    cursor.fail(
      '',
      `${tensorCount} tensors and ${kvCount} metadata pairs need at least ${tensorCount * MIN_TENSOR_INFO_BYTES + kvCount * MIN_KV_BYTES} bytes; ${cursor.left} are left in the file`,
    );
  const metadata = new Map<string, GgufMetadataValue>();
  for (let index = 0; index < kvCount; index++) {
    cursor.where = `metadata pair ${index}`;
    const key = cursor.string(`metadata pair ${index}`, GGUF_LIMITS.maxKeyBytes, 'key');
    if (key === '') cursor.fail(`metadata pair ${index}`, 'the key is empty');
    if (metadata.has(key)) cursor.fail(key, 'the key appears twice');
    cursor.where = `the value of ${key}`;
    metadata.set(key, readValue(cursor, key));
  }
  const alignment = alignmentOf(cursor, metadata);
  const names = new Set<string>();
  const raws: RawTensorInfo[] = [];
  for (let index = 0; index < tensorCount; index++) raws.push(readTensorInfo(cursor, index, names));
  const dataOffset = alignUp(cursor.position, alignment);
  const tensors = raws.map((raw) => placeTensor(cursor, raw, alignment, dataOffset));
  const byStart = [...tensors].sort((a, b) => a.start - b.start);
  byStart.forEach((tensor, index) => {
    const next = byStart[index + 1];
    if (next !== undefined && tensor.start + tensor.bytes > next.start)
      cursor.fail(
        next.name,
        `its data (bytes ${next.start}..${next.start + next.bytes}) overlaps ${tensor.name}'s (bytes ${tensor.start}..${tensor.start + tensor.bytes})`,
      );
  });
  return { version, metadata, tensors, alignment, dataOffset, fileBytes };
}

// The first read; a header past it is read again in a window twice as large, never past the file.
const FIRST_WINDOW_BYTES = 1 << 20;

/**
 * Reads and checks the GGUF header of `blob` (a file, a browser File, or bytes), named `file` in
 * errors. Reads no more of the blob than the header needs (at most twice that), never past its end.
 */
export async function readGgufHeader(blob: Blob, file: string): Promise<GgufHeader> {
  let window = Math.min(blob.size, FIRST_WINDOW_BYTES);
  for (;;) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await blob.slice(0, window).arrayBuffer());
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ModelError(file, '', `not a readable GGUF file (${why})`);
    }
    try {
      return parseGgufHeader(bytes, blob.size, file);
    } catch (error) {
      if (!(error instanceof NeedMoreBytes)) throw error;
      window = Math.min(blob.size, Math.max(2 * window, error.until));
    }
  }
}
