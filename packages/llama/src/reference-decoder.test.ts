import { ValidationError } from '@forge/ir';
import { Rng } from '@forge/ir/kernels';
import { describe, expect, it } from 'vitest';
import {
  referenceRope,
  createReferenceDecoder,
  type ReferenceHyperparameters,
  type ReferenceLayer,
  type ReferenceModel,
} from './reference-decoder.js';

const identity = (n: number): Float64Array =>
  Float64Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0));
const filled = (n: number, value: number): Float64Array => new Float64Array(n).fill(value);
const rms = (x: readonly number[]): number =>
  Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);
const silu = (v: number): number => v / (1 + Math.exp(-v));

/** One head of width 2 in a 2-wide model, identity projections, unit norms, no FFN (gate 0); logits (x0, x1, x0 − x1). */
function tinyModel(
  overrides: Partial<ReferenceLayer> = {},
  output = Float64Array.from([1, 0, 0, 1, 1, -1]),
): ReferenceModel {
  const hparams: ReferenceHyperparameters = {
    ...{ nVocab: 3, nEmbd: 2, nLayer: 1, nHead: 1, nKvHead: 1, headDim: 2, nFf: 2 },
    ...{ rmsEps: 0, ropeBase: 10000, ropeMode: 'normal' },
  };
  const layer: ReferenceLayer = {
    ...{
      attnNorm: filled(2, 1),
      wq: identity(2),
      wk: identity(2),
      wv: identity(2),
      wo: identity(2),
    },
    ...{ ffnNorm: filled(2, 1), wGate: filled(4, 0), wUp: identity(2), wDown: identity(2) },
    ...overrides,
  };
  const tokenEmbd = Float64Array.from([1, 0, 3, 4, 0, 2]);
  return { hparams, tokenEmbd, layers: [layer], outputNorm: filled(2, 1), output };
}

function randomModel(
  seed: number,
  hparams: Partial<ReferenceHyperparameters> = {},
  tied = false,
): ReferenceModel {
  const p: ReferenceHyperparameters = {
    ...{ nVocab: 16, nEmbd: 8, nLayer: 2, nHead: 4, nKvHead: 2, headDim: 2, nFf: 12 },
    ...{ rmsEps: 1e-5, ropeBase: 10000, ropeMode: 'normal' as const },
    ...hparams,
  };
  const rng = new Rng(seed);
  const random = (rows: number, cols: number): Float64Array =>
    Float64Array.from({ length: rows * cols }, () => rng.uniform(-1, 1) / Math.sqrt(cols));
  const norm = (): Float64Array =>
    Float64Array.from({ length: p.nEmbd }, () => rng.uniform(0.5, 1.5));
  const [qDim, kvDim] = [p.nHead * p.headDim, p.nKvHead * p.headDim];
  const layers = Array.from({ length: p.nLayer }, () => ({
    ...{
      attnNorm: norm(),
      wq: random(qDim, p.nEmbd),
      wk: random(kvDim, p.nEmbd),
      wv: random(kvDim, p.nEmbd),
    },
    ...{ wo: random(p.nEmbd, qDim), ffnNorm: norm(), wGate: random(p.nFf, p.nEmbd) },
    ...{ wUp: random(p.nFf, p.nEmbd), wDown: random(p.nEmbd, p.nFf) },
  }));
  const tokenEmbd = random(p.nVocab, p.nEmbd).map((v) => v * 4);
  return {
    hparams: p,
    tokenEmbd,
    layers,
    outputNorm: norm(),
    output: tied ? undefined : random(p.nVocab, p.nEmbd),
  };
}

function run(
  model: ReferenceModel,
  tokens: readonly number[],
  kv: 'f32' | 'f16' = 'f32',
): Float64Array[] {
  const decoder = createReferenceDecoder(model, { kv });
  return tokens.map((token, pos) => decoder.step(token, pos));
}

describe('reference Llama decoder', () => {
  it('matches the closed form of a one-layer identity model at position 0 (eps 0.5)', () => {
    const tiny = tinyModel({ attnNorm: Float64Array.from([1, 0.5]), wGate: identity(2) });
    const eps = 0.5;
    const model = { ...tiny, hparams: { ...tiny.hparams, rmsEps: eps } };
    const logits = run(model, [1])[0] ?? new Float64Array(0);
    const norm = (x: readonly number[]): number[] => {
      const scale = 1 / Math.sqrt(x.reduce((t, v) => t + v * v, 0) / x.length + eps);
      return x.map((v) => v * scale);
    };
    // x = (3, 4); one position, so attention returns v = h = rmsnorm(x)·attn_norm.
    const r0 = Math.sqrt(12.5 + eps);
    const x1 = [3 + 3 / r0, 4 + (4 * 0.5) / r0];
    const f = norm(x1);
    const x2 = x1.map((v, i) => v + silu(f[i] ?? 0) * (f[i] ?? 0));
    const [a, b] = norm(x2);
    const expected = [a ?? 0, b ?? 0, (a ?? 0) - (b ?? 0)];
    expect(logits.length).toBe(3);
    logits.forEach((value, i) => expect(value).toBeCloseTo(expected[i] ?? NaN, 12));
  });

  it('rotates q and k at pos 1 by 1 radian before scoring (pair 0 angle is pos)', () => {
    const [, logits] = run(tinyModel({ wq: identity(2).map((v) => v * 2) }), [1, 2]);
    // h at pos 0 (token 1, x = (3, 4)) and pos 1 (token 2, x = (0, 2)); v = k = h, q = 2h, then rope.
    const [ha, hb] = [[3, 4].map((v) => v / Math.sqrt(12.5)), [0, 2].map((v) => v / Math.sqrt(2))];
    const dot = (u: readonly number[], w: readonly number[]): number =>
      u.reduce((t, v, i) => t + v * (w[i] ?? 0), 0);
    const expectedAt = (angle: number): number[] => {
      const [c, s] = [Math.cos(angle), Math.sin(angle)];
      const rotate = (v: readonly number[]): number[] => [
        (v[0] ?? 0) * c - (v[1] ?? 0) * s,
        (v[0] ?? 0) * s + (v[1] ?? 0) * c,
      ];
      const [q, k0, k1] = [rotate(hb.map((v) => 2 * v)), ha, rotate(hb)];
      const scores = [dot(q, k0), dot(q, k1)].map((v) => Math.exp(v / Math.sqrt(2)));
      const [w0, w1] = scores.map((v) => v / ((scores[0] ?? 0) + (scores[1] ?? 0)));
      const x = [0, 2].map((e, d) => e + (w0 ?? 0) * (ha[d] ?? 0) + (w1 ?? 0) * (hb[d] ?? 0));
      return x.map((v) => v / rms(x));
    };
    const [rotated, unrotated] = [expectedAt(1), expectedAt(0)];
    expect(logits?.[0]).toBeCloseTo(rotated[0] ?? NaN, 12);
    expect(logits?.[1]).toBeCloseTo(rotated[1] ?? NaN, 12);
    // The check has teeth: without rope the logits would be elsewhere.
    expect(Math.abs((rotated[0] ?? 0) - (unrotated[0] ?? 0))).toBeGreaterThan(1e-3);
  });

  it('averages v over positions when every score is equal (wq = 0)', () => {
    const [, logits] = run(tinyModel({ wq: filled(4, 0) }), [1, 2]);
    const x = [0 + (3 / Math.sqrt(12.5) + 0) / 2, 2 + (4 / Math.sqrt(12.5) + 2 / Math.sqrt(2)) / 2];
    expect(logits?.[0]).toBeCloseTo((x[0] ?? 0) / rms(x), 12);
    expect(logits?.[1]).toBeCloseTo((x[1] ?? 0) / rms(x), 12);
  });

  it('returns v at a single position whatever the scores are', () => {
    const base = randomModel(7, { nLayer: 1 });
    const layer = base.layers[0] as ReferenceLayer;
    const zeroQ = { ...base, layers: [{ ...layer, wq: new Float64Array(layer.wq.length) }] };
    expect(run(base, [5])[0]).toEqual(run(zeroQ, [5])[0]);
    expect(run(base, [5, 6])[1]).not.toEqual(run(zeroQ, [5, 6])[1]);
  });

  it('maps query heads to KV heads in groups: only KV head 1 nonzero reaches heads 2 and 3', () => {
    const hparams = { nVocab: 8, nEmbd: 8, nLayer: 1, nHead: 4, nKvHead: 2, headDim: 2, nFf: 2 };
    const wv = new Float64Array(4 * 8);
    [wv[2 * 8 + 0], wv[3 * 8 + 1]] = [1, 1];
    const layer: ReferenceLayer = {
      ...{ attnNorm: filled(8, 1), wq: filled(64, 0), wk: filled(32, 0), wv, wo: identity(8) },
      ...{ ffnNorm: filled(8, 1), wGate: filled(16, 0), wUp: filled(16, 0), wDown: filled(16, 0) },
    };
    const tokenEmbd = new Float64Array(64);
    tokenEmbd.set([1, 2], 3 * 8);
    const model: ReferenceModel = {
      ...{ hparams: { ...hparams, rmsEps: 0, ropeBase: 10000, ropeMode: 'normal' }, tokenEmbd },
      ...{ layers: [layer], outputNorm: filled(8, 1), output: identity(8) },
    };
    const [first, logits] = run(model, [3, 3]).map((l) => Array.from(l));
    // Heads 0, 1 (KV head 0) add nothing: coordinates 2, 3 stay 0; heads 2, 3 carry the same v.
    expect(logits?.slice(2, 4)).toEqual([0, 0]);
    expect(logits?.slice(4, 8).every((v) => v > 0)).toBe(true);
    expect(logits?.slice(4, 6)).toEqual(logits?.slice(6, 8));
    expect(first).toEqual(logits);
  });

  it('rounds the f16 cache to f16: a small nonzero difference from f32', () => {
    const model = randomModel(11);
    const tokens = [3, 1, 4, 1, 5, 9, 2, 6];
    const [f32, f16] = [run(model, tokens, 'f32'), run(model, tokens, 'f16')];
    let [worst, energy] = [0, 0];
    f32.forEach((logits, step) =>
      logits.forEach((v, i) => {
        worst = Math.max(worst, Math.abs(v - (f16[step]?.[i] ?? 0)));
        energy = Math.max(energy, Math.abs(v));
      }),
    );
    expect(worst).toBeGreaterThan(0);
    // f16 keeps 11 bits (relative 2^-11 ≈ 5e-4 per value): the logits move by that order, no more.
    expect(worst / energy).toBeLessThan(5e-3);
  });

  it('is deterministic, and rewinding to a position forgets what followed it', () => {
    const model = randomModel(12, { ropeMode: 'neox', headDim: 4, nHead: 2, nKvHead: 1 });
    const tokens = [2, 7, 1, 8, 2, 8];
    const first = run(model, tokens);
    expect(run(model, tokens)).toEqual(first);
    const decoder = createReferenceDecoder(model, { kv: 'f16' });
    tokens.forEach((token, pos) => decoder.step(token, pos));
    const again = createReferenceDecoder(model, { kv: 'f16' });
    // Another token at the rewound position: a cache still holding the old k or v would show.
    const reference = [tokens[0] ?? 0, tokens[1] ?? 0, 5].map((token, pos) =>
      again.step(token, pos),
    );
    expect(decoder.step(5, 2)).toEqual(reference[2]);
    expect(decoder.length).toBe(3);
  });

  it('ties the output to the token embedding when output is absent', () => {
    const tied = randomModel(13, {}, true);
    const untied = { ...tied, output: tied.tokenEmbd.slice() };
    expect(run(tied, [1, 2, 3])).toEqual(run(untied, [1, 2, 3]));
    expect(run(tied, [1, 2, 3])).not.toEqual(run(randomModel(13), [1, 2, 3]));
  });

  it('names the field of a model, token or position that does not fit', () => {
    const model = randomModel(14);
    const short = {
      ...model,
      layers: [
        { ...(model.layers[0] as ReferenceLayer), wq: new Float64Array(3) },
        model.layers[1] as ReferenceLayer,
      ],
    };
    expect(() => createReferenceDecoder(short, { kv: 'f32' })).toThrow(
      /layers\[0\]\.wq.*length 3, expected 64/,
    );
    const badGroup = { ...model, hparams: { ...model.hparams, nKvHead: 3 } };
    expect(() => createReferenceDecoder(badGroup, { kv: 'f32' })).toThrow(ValidationError);
    expect(() => createReferenceDecoder(badGroup, { kv: 'f32' })).toThrow(/hparams\.nKvHead/);
    const decoder = createReferenceDecoder(model, { kv: 'f32' });
    expect(() => decoder.step(16, 0)).toThrow(/token/);
    expect(() => decoder.step(0, 1)).toThrow(/pos.*from 0 to 0/);
  });
});

describe('referenceRope', () => {
  const x = (): Float64Array => Float64Array.from([1, 2, 3, 4, -1, 0.5, 2, -3]);

  it('is the identity at position 0', () => {
    for (const mode of ['normal', 'neox'] as const) {
      const v = x();
      referenceRope(v, 2, 4, 0, 10000, mode);
      expect(v).toEqual(x());
    }
  });

  it('rotates pair 1 of a head of 4 at pos 3 by 3·10000^(−1/2) = 0.03 rad', () => {
    const [c, s] = [Math.cos(0.03), Math.sin(0.03)];
    const normal = x();
    referenceRope(normal, 2, 4, 3, 10000, 'normal');
    // Normal mode pairs (2, 3) of each head; head 1 starts at 4.
    expect(normal[2]).toBeCloseTo(3 * c - 4 * s, 14);
    expect(normal[3]).toBeCloseTo(3 * s + 4 * c, 14);
    expect(normal[6]).toBeCloseTo(2 * c + 3 * s, 14);
    expect(normal[0]).toBeCloseTo(Math.cos(3) - 2 * Math.sin(3), 14);
    const neox = x();
    referenceRope(neox, 2, 4, 3, 10000, 'neox');
    // NeoX mode pairs (1, 3): value i with i + head_dim/2.
    expect(neox[1]).toBeCloseTo(2 * c - 4 * s, 14);
    expect(neox[3]).toBeCloseTo(2 * s + 4 * c, 14);
    expect(neox[0]).toBeCloseTo(Math.cos(3) - 3 * Math.sin(3), 14);
  });
});
