// The oracle's real GGUF file: its two quantized tensors decode to ggml's floats, and the
// manifest's seeded inputs re-quantize to the file's bytes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dequantize, quantize, type QuantType } from './formats.js';

const ORACLE = new URL('../../../../fixtures/ggml/', import.meta.url);
const read = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, ORACLE)));
const floats = (name: string): Float32Array => {
  const bytes = read(name);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(4 * i, true));
};

/** The manifest's splitmix64 stream as floats u in [-1, 1) on a 2^-23 grid. */
function splitmixFloats(seed: bigint): () => number {
  const mask = (1n << 64n) - 1n;
  let state = seed;
  return () => {
    state = (state + 0x9e3779b97f4a7c15n) & mask;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    return Math.fround(Number((z ^ (z >> 31n)) >> 40n) * 2 ** -23 - 1);
  };
}

const fr = Math.fround;

/** The manifest's row recipe, value = f(u, r, c) in float32, drawn row-major. */
function recipeMatrix(next: () => number, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const u = next();
      const values = [
        u,
        u,
        fr(fr(u * (1 + ((c >> 4) & 15))) / 16),
        fr(u * fr(0.01)),
        fr(fr(0.5 * u) + fr(fr(((c >> 5) & 7) - 3.5) / 4)),
        fr(u * 100),
        fr(u + 1),
        u,
      ];
      out[r * cols + c] = values[r % 8] ?? u;
    }
  }
  return out;
}

/**
 * Finds a tensor in a GGUF v3 file by its name in the tensor-info table (name, n_dims, ne[],
 * type, offset); the data section starts at the end of the last info, aligned to 32. A test
 * helper only: the product reads GGUF with @huggingface/gguf.
 */
function findTensors(file: Uint8Array, names: readonly string[]) {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let headerEnd = 0;
  const infos = names.map((name) => {
    const key = new TextEncoder().encode(name);
    let at = -1;
    for (let i = 8; at < 0 && i + key.length <= file.length; i++) {
      if (view.getUint32(i - 8, true) === key.length && key.every((b, k) => file[i + k] === b))
        at = i + key.length;
    }
    if (at < 0) throw new Error(`tensor ${name} not found`);
    const nDims = view.getUint32(at, true);
    const dims = Array.from({ length: nDims }, (_, d) =>
      Number(view.getBigUint64(at + 4 + 8 * d, true)),
    );
    const typeAt = at + 4 + 8 * nDims;
    headerEnd = Math.max(headerEnd, typeAt + 12);
    return {
      dims,
      ggmlType: view.getUint32(typeAt, true),
      offset: view.getBigUint64(typeAt + 4, true),
    };
  });
  const dataStart = Math.ceil(headerEnd / 32) * 32;
  return infos.map((info) => ({ ...info, fileOffset: dataStart + Number(info.offset) }));
}

describe('forge-oracle.gguf', () => {
  const file = read('forge-oracle.gguf');
  const [ffnDown, output, norm] = findTensors(file, [
    'blk.0.ffn_down.weight',
    'output.weight',
    'blk.0.attn_norm.weight',
  ]);

  it('locates the tensors where the manifest says (GGUF v3, alignment 32)', () => {
    expect(new TextDecoder().decode(file.subarray(0, 4))).toBe('GGUF');
    expect(new DataView(file.buffer, file.byteOffset).getUint32(4, true)).toBe(3);
    expect([ffnDown, output, norm].map((t) => [t?.dims, t?.ggmlType, t?.fileOffset])).toEqual([
      [[256, 32], 12, 544],
      [[256, 16], 14, 5152],
      [[256], 0, 8512],
    ]);
  });

  const cases: [string, QuantType, number, number][] = [
    ['blk.0.ffn_down.weight', 'q4_K', 32, 544],
    ['output.weight', 'q6_K', 16, 5152],
  ];

  it.each(cases)('%s (%s) dequantizes to ggml floats bit for bit', (name, type, rows, at) => {
    const bytes = file.subarray(at, at + rows * (type === 'q4_K' ? 144 : 210));
    expect(dequantize(type, bytes, rows, 256)).toEqual(floats(`gguf.${name}.deq.f32`));
  });

  it('re-quantizes the seed-44 inputs to the bytes ggml wrote', () => {
    const next = splitmixFloats(44n);
    const down = recipeMatrix(next, 32, 256);
    const out = recipeMatrix(next, 16, 256);
    const norm = Float32Array.from({ length: 256 }, () => fr(1 + fr(fr(0.1) * next())));
    expect(quantize('q4_K', down, 32, 256)).toEqual(file.subarray(544, 544 + 32 * 144));
    expect(quantize('q6_K', out, 16, 256)).toEqual(file.subarray(5152, 5152 + 16 * 210));
    expect(norm).toEqual(floats('gguf.blk.0.attn_norm.weight.deq.f32'));
  });

  it('regenerates src_64x512 from seed 42 (so the recipe above is the manifest’s)', () => {
    const src = recipeMatrix(splitmixFloats(42n), 64, 512);
    src.fill(0, 63 * 512);
    expect(src).toEqual(floats('src_64x512.w.f32'));
  });
});
