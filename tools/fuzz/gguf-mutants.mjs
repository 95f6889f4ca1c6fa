// Structured mutants of real GGUF files (the tiny Llama models): each a lie a hostile or damaged
// model file could tell — counts, offsets, types, dimensions, names, metadata values, alignment,
// versions, truncation, flipped header bytes — built on @forge/test-fixtures' raw GGUF fields.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeRawGguf, encodeRawGguf } from '@forge/test-fixtures';
import { mulberry32 } from '../mulberry32.mjs';

const MODELS = fileURLToPath(new URL('../../fixtures/tiny-llama/', import.meta.url));

/** The seed files, each with the `forge run --gguf` command its tensors can drive (if any). */
export function ggufSeeds() {
  return [
    { name: 'tiny-llama-f32', run: undefined },
    {
      name: 'tiny-llama-q',
      run: [
        ['q4k-gemv', 'blk.0.attn_q.weight'],
        ['q6k-gemv', 'output.weight'],
        ['q8_0-gemv', 'token_embd.weight'],
      ],
    },
  ].map((seed) => {
    const bytes = new Uint8Array(readFileSync(`${MODELS}${seed.name}.gguf`));
    return { ...seed, bytes, raw: decodeRawGguf(bytes) };
  });
}

/** A seeded generator (mulberry32): the same seed gives the same mutants on any machine. */
export function createRng(seed) {
  const next = mulberry32(seed);
  const integer = (below) => Math.floor(next() * below);
  return { next, integer, pick: (items) => items[integer(items.length)] };
}

// Values that sit on the edges of u32/u64 arithmetic and of what a file can hold.
const EDGE_U64 = [0n, 1n, 2n, 3n, 31n, 255n, 256n, 4096n, 2n ** 24n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 40n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n]; // prettier-ignore
const EDGE_U32 = [0, 1, 2, 3, 7, 8, 48, 63, 64, 1000, 2 ** 16, 2 ** 24, 10_000_000, 2 ** 31, 2 ** 32 - 1]; // prettier-ignore
const EDGE_F32 = [0, -1, 1e-30, 1e30, Number.NaN, Infinity, -Infinity, 5e-6, 10000];

const u32Bytes = (value) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value >>> 0, true);
  return bytes;
};
const u64Bytes = (value) => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, value), true);
  return bytes;
};
const f32Bytes = (value) => new Uint8Array(Float32Array.of(value).buffer);
const stringBytes = (text) => {
  const encoded = new TextEncoder().encode(text);
  const bytes = new Uint8Array(8 + encoded.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(encoded.length), true);
  bytes.set(encoded, 8);
  return bytes;
};
const arrayBytes = (itemType, count, body) => {
  const head = new Uint8Array(12);
  new DataView(head.buffer).setUint32(0, itemType, true);
  new DataView(head.buffer).setBigUint64(4, BigInt.asUintN(64, count), true);
  const bytes = new Uint8Array(12 + body.length);
  bytes.set(head);
  bytes.set(body, 12);
  return bytes;
};

/** A new value for a metadata pair: [type id, value bytes, tag]. */
function metadataValue(rng) {
  switch (rng.integer(7)) {
    case 0:
      return [4, u32Bytes(rng.pick(EDGE_U32)), 'u32'];
    case 1:
      return [10, u64Bytes(rng.pick(EDGE_U64)), 'u64'];
    case 2:
      return [6, f32Bytes(rng.pick(EDGE_F32)), 'f32'];
    case 3:
      return [8, stringBytes(rng.pick(['', 'llama', 'gpt2', 'x\ny', '\u0000'.repeat(5)])), 'string']; // prettier-ignore
    case 4:
      // An array whose count lies about what follows.
      return [9, arrayBytes(rng.pick([4, 8, 9, 12]), rng.pick(EDGE_U64), new Uint8Array(rng.integer(32))), 'array']; // prettier-ignore
    case 5:
      return [rng.integer(40), new Uint8Array(rng.integer(16)), 'bad-type'];
    default:
      return [8, u64Bytes(rng.pick(EDGE_U64)), 'string-length'];
  }
}

const replaceAt = (items, index, item) => items.map((old, i) => (i === index ? item : old));

/** One structural mutation of `raw`; returns [raw, tag]. */
function mutateOnce(raw, rng) {
  const tensorIndex = rng.integer(raw.tensors.length);
  const tensor = raw.tensors[tensorIndex];
  const setTensor = (change) => ({ ...raw, tensors: replaceAt(raw.tensors, tensorIndex, { ...tensor, ...change }) }); // prettier-ignore
  const pairIndex = rng.integer(raw.pairs.length);
  const pair = raw.pairs[pairIndex];
  switch (rng.integer(12)) {
    case 0:
      return [{ ...raw, tensorCount: rng.pick(EDGE_U64) }, 'tensor-count'];
    case 1:
      return [{ ...raw, kvCount: rng.pick(EDGE_U64) }, 'kv-count'];
    case 2: {
      const other = raw.tensors[rng.integer(raw.tensors.length)];
      const offset = rng.pick([rng.pick(EDGE_U64), other.offset, tensor.offset + 1n, tensor.offset + 32n]); // prettier-ignore
      return [setTensor({ offset }), 'tensor-offset'];
    }
    case 3:
      return [setTensor({ type: rng.pick([rng.integer(45), 0, 1, 2, 8, 12, 14, 30, 4, 31, 2 ** 31]) }), 'tensor-type']; // prettier-ignore
    case 4: {
      const ne = [...tensor.ne];
      const axis = rng.integer(ne.length + 1);
      if (rng.next() < 0.3) return [setTensor({ ne: rng.next() < 0.5 ? [] : [...ne, 1n, 1n, 1n, 1n] }), 'tensor-dims']; // prettier-ignore
      ne[axis] = rng.pick(EDGE_U64);
      return [setTensor({ ne }), 'tensor-ne'];
    }
    case 5: {
      const name = rng.pick([raw.tensors[rng.integer(raw.tensors.length)].name, '', 'n'.repeat(64), 'a\nb', `${tensor.name}\u0000`]); // prettier-ignore
      return [setTensor({ name }), 'tensor-name'];
    }
    case 6: {
      const [type, value, tag] = metadataValue(rng);
      return [{ ...raw, pairs: replaceAt(raw.pairs, pairIndex, { ...pair, type, value }) }, `value-${tag}`]; // prettier-ignore
    }
    case 7: {
      const key = rng.pick(['general.alignment', 'llama.block_count', 'llama.context_length', 'llama.embedding_length', 'llama.attention.head_count', 'llama.attention.head_count_kv', 'llama.attention.key_length', 'llama.vocab_size', 'llama.rope.freq_base', 'llama.attention.layer_norm_rms_epsilon']); // prettier-ignore
      const [type, value, tag] = key === 'general.alignment' && rng.next() < 0.7 ? [4, u32Bytes(rng.pick(EDGE_U32)), 'u32'] : metadataValue(rng); // prettier-ignore
      const pairs = raw.pairs.some((p) => p.key === key) ? raw.pairs.map((p) => (p.key === key ? { key, type, value } : p)) : [...raw.pairs, { key, type, value }]; // prettier-ignore
      return [
        { ...raw, pairs, kvCount: BigInt(pairs.length) },
        `key-${key.split('.').pop()}-${tag}`,
      ];
    }
    case 8: {
      const pairs =
        rng.next() < 0.5 ? raw.pairs.filter((_, i) => i !== pairIndex) : [...raw.pairs, pair];
      return [{ ...raw, pairs, kvCount: BigInt(pairs.length) }, rng.next() < 0.5 ? 'drop-pair' : 'twin-pair']; // prettier-ignore
    }
    case 9:
      return [{ ...raw, version: rng.pick([0, 1, 2, 4, 2 ** 24 * 3]) }, 'version'];
    case 10: {
      const tensors = rng.next() < 0.5 ? raw.tensors.filter((_, i) => i !== tensorIndex) : [...raw.tensors, tensor]; // prettier-ignore
      return [{ ...raw, tensors, tensorCount: BigInt(tensors.length) }, 'tensor-list'];
    }
    default:
      return [{ ...raw, magic: rng.pick(['GGUF', 'GGML', 'FUGG', 'GGU']) }, 'magic'];
  }
}

/** Header bytes of `bytes` with a few bytes flipped or the file cut short. */
function damageBytes(bytes, headerBytes, rng) {
  if (rng.next() < 0.5) {
    const cut = rng.next() < 0.7 ? rng.integer(headerBytes + 64) : rng.integer(bytes.length);
    return [bytes.slice(0, cut), 'truncate'];
  }
  const copy = bytes.slice();
  for (let i = 0; i < 1 + rng.integer(8); i++) copy[rng.integer(headerBytes)] = rng.integer(256);
  return [copy, 'flip'];
}

/** One mutant of `seed`: its bytes and the tags of what was done to it. */
export function ggufMutant(seed, rng) {
  let raw = seed.raw;
  const tags = [];
  for (let i = 0; i < 1 + rng.integer(3); i++) {
    const [next, tag] = mutateOnce(raw, rng);
    raw = next;
    tags.push(tag);
  }
  let bytes = encodeRawGguf(raw);
  if (rng.next() < 0.3) {
    const headerBytes = bytes.length - raw.data.length;
    const [damaged, tag] = damageBytes(bytes, headerBytes, rng);
    bytes = damaged;
    tags.push(tag);
  }
  return { bytes, tags };
}
