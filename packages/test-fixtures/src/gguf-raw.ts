// A GGUF file as its raw fields, every one of which can be set to a lie: counts that disagree with
// what follows, any type id, any offset, any value bytes. For the tests and the fuzzer of the
// model reader, which must refuse each lie in one line; `decodeRawGguf` takes a well-formed file
// apart (from writeGguf), `encodeRawGguf` puts the fields back together as they stand.

/** One metadata pair: its key, GGUF value type id and the value's encoded bytes. */
export interface RawGgufPair {
  readonly key: string;
  readonly type: number;
  readonly value: Uint8Array;
}

/** One tensor info, fields as stored. */
export interface RawGgufTensor {
  readonly name: string;
  readonly ne: readonly bigint[];
  readonly type: number;
  /** Relative to the data section. */
  readonly offset: bigint;
}

/** A whole file's fields; `tensorCount` / `kvCount` are written as given, whatever the lists hold. */
export interface RawGguf {
  readonly magic: string;
  readonly version: number;
  readonly tensorCount: bigint;
  readonly kvCount: bigint;
  readonly pairs: readonly RawGgufPair[];
  readonly tensors: readonly RawGgufTensor[];
  /** Padding between the tensor infos and the data section. */
  readonly alignment: number;
  /** The data section, from its first byte to the end of the file. */
  readonly data: Uint8Array;
}

// Bytes of each fixed-size GGUF value type, by type id (string 8 and array 9 are variable).
const SCALAR_BYTES: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

class Reader {
  at = 0;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u32(): number {
    this.at += 4;
    return this.view.getUint32(this.at - 4, true);
  }
  u64(): bigint {
    this.at += 8;
    return this.view.getBigUint64(this.at - 8, true);
  }
  string(): string {
    const length = Number(this.u64());
    this.at += length;
    return new TextDecoder().decode(this.bytes.subarray(this.at - length, this.at));
  }
  /** Skips one value of `type`, returning its bytes. */
  value(type: number): Uint8Array {
    const start = this.at;
    if (type === 8) this.string();
    else if (type === 9) {
      const item = this.u32();
      const count = Number(this.u64());
      for (let i = 0; i < count; i++) this.value(item);
    } else this.at += SCALAR_BYTES[type] ?? 0;
    return this.bytes.slice(start, this.at);
  }
}

/** The fields of a well-formed GGUF file (v2 or v3, as writeGguf makes). */
export function decodeRawGguf(bytes: Uint8Array): RawGguf {
  const reader = new Reader(bytes);
  const magic = new TextDecoder().decode(bytes.subarray(0, 4));
  reader.at = 4;
  const version = reader.u32();
  const tensorCount = reader.u64();
  const kvCount = reader.u64();
  const pairs: RawGgufPair[] = [];
  let alignment = 32;
  for (let i = 0n; i < kvCount; i++) {
    const key = reader.string();
    const type = reader.u32();
    const value = reader.value(type);
    if (key === 'general.alignment' && type === 4)
      alignment = new DataView(value.buffer).getUint32(0, true);
    pairs.push({ key, type, value });
  }
  const tensors: RawGgufTensor[] = [];
  for (let i = 0n; i < tensorCount; i++) {
    const name = reader.string();
    const dims = reader.u32();
    const ne = Array.from({ length: dims }, () => reader.u64());
    tensors.push({ name, ne, type: reader.u32(), offset: reader.u64() });
  }
  const dataStart = Math.ceil(reader.at / alignment) * alignment;
  return {
    magic,
    version,
    tensorCount,
    kvCount,
    pairs,
    tensors,
    alignment,
    data: bytes.slice(dataStart),
  };
}

/** The bytes of `raw`, fields written exactly as they stand. */
export function encodeRawGguf(raw: RawGguf): Uint8Array {
  const parts: Uint8Array[] = [];
  const u32 = (value: number) => {
    const part = new Uint8Array(4);
    new DataView(part.buffer).setUint32(0, value >>> 0, true);
    parts.push(part);
  };
  const u64 = (value: bigint) => {
    const part = new Uint8Array(8);
    new DataView(part.buffer).setBigUint64(0, BigInt.asUintN(64, value), true);
    parts.push(part);
  };
  const string = (text: string) => {
    const encoded = new TextEncoder().encode(text);
    u64(BigInt(encoded.length));
    parts.push(encoded);
  };
  parts.push(new TextEncoder().encode(raw.magic));
  u32(raw.version);
  u64(raw.tensorCount);
  u64(raw.kvCount);
  for (const pair of raw.pairs) {
    string(pair.key);
    u32(pair.type);
    parts.push(pair.value);
  }
  for (const tensor of raw.tensors) {
    string(tensor.name);
    u32(tensor.ne.length);
    tensor.ne.forEach(u64);
    u32(tensor.type);
    u64(tensor.offset);
  }
  const headerBytes = parts.reduce((sum, part) => sum + part.length, 0);
  const alignment = Math.max(1, raw.alignment);
  parts.push(new Uint8Array((alignment - (headerBytes % alignment)) % alignment));
  parts.push(raw.data);
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A u32 metadata value's bytes (type id 4). */
export function rawU32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value >>> 0, true);
  return bytes;
}

/** The raw file with metadata `key` set to a value of `type` with bytes `value` (added if absent). */
export function withRawPair(raw: RawGguf, key: string, type: number, value: Uint8Array): RawGguf {
  const pairs = raw.pairs.some((pair) => pair.key === key)
    ? raw.pairs.map((pair) => (pair.key === key ? { key, type, value } : pair))
    : [...raw.pairs, { key, type, value }];
  return { ...raw, pairs, kvCount: BigInt(pairs.length) };
}
