import { describe, expect, it } from 'vitest';
import { blake3Hex, canonicalJson, semanticHash } from './hash.js';
import { getKernel } from './kernels/catalog.js';

const EMPTY = 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262';

describe('blake3Hex', () => {
  it('matches the official BLAKE3 hash of the empty input', () => {
    expect(blake3Hex('')).toBe(EMPTY);
    expect(blake3Hex(new Uint8Array())).toBe(EMPTY);
  });

  it('matches the official test vector for one zero byte', () => {
    // BLAKE3 test_vectors.json, input_len 1 (the input is bytes 0, 1, 2, ... mod 251).
    expect(blake3Hex(new Uint8Array([0]))).toBe(
      '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213',
    );
  });

  it('hashes strings as UTF-8', () => {
    expect(blake3Hex('é')).toBe(blake3Hex(new Uint8Array([0xc3, 0xa9])));
    expect(blake3Hex('abc')).toBe(blake3Hex(new TextEncoder().encode('abc')));
    expect(blake3Hex('abc')).not.toBe(blake3Hex('abd'));
  });

  it('gives 64 lowercase hex digits and does not carry state between calls', () => {
    const first = blake3Hex('forge');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    blake3Hex('x'.repeat(10_000));
    expect(blake3Hex('forge')).toBe(first);
    expect(blake3Hex('')).toBe(EMPTY);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and drops whitespace', () => {
    const value = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } };
    expect(canonicalJson(value)).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('sorts by UTF-16 code units, not locale', () => {
    expect(canonicalJson({ a: 1, B: 2, _: 3, '10': 4, '9': 5 })).toBe(
      '{"10":4,"9":5,"B":2,"_":3,"a":1}',
    );
  });

  it('keeps array order and escapes strings like JSON', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson({ 'a"b': 'line\nbreak' })).toBe('{"a\\"b":"line\\nbreak"}');
  });

  it('is independent of key insertion order', () => {
    expect(canonicalJson({ x: 1, y: { p: true, q: 'q' } })).toBe(
      canonicalJson({ y: { q: 'q', p: true }, x: 1 }),
    );
  });

  it('drops undefined fields, like JSON.stringify', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('rejects values that are not JSON', () => {
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
  });

  it('parses back to the same value', () => {
    const spec = getKernel('rmsnorm').spec;
    expect(JSON.parse(canonicalJson(spec))).toEqual(spec);
  });
});

describe('semanticHash', () => {
  it("is the BLAKE3 of the canonical JSON less the knobs' bounds", () => {
    const spec = getKernel('affine-f32').spec;
    const schedule = spec.schedule.map(({ bounds: _bounds, ...knob }) => knob);
    expect(semanticHash(spec)).toBe(blake3Hex(canonicalJson({ ...spec, schedule })));
    expect(semanticHash(spec)).not.toBe(blake3Hex(canonicalJson(spec)));
  });

  it('ignores schedule bounds but not defaults or the body', () => {
    const rmsnorm = getKernel('rmsnorm').spec;
    const [knob] = rmsnorm.schedule;
    if (knob === undefined) throw new Error('rmsnorm has no knob');
    const withKnob = (changed: typeof knob) => ({ ...rmsnorm, schedule: [changed] });
    const hash = semanticHash(rmsnorm);
    // Narrower, absent, empty, or for a new target kind: the same kernel.
    expect(semanticHash(withKnob({ ...knob, bounds: { ptx: { min: 64, max: 512 } } }))).toBe(hash);
    expect(semanticHash(withKnob({ ...knob, bounds: {} }))).toBe(hash);
    const { bounds: _bounds, ...unbounded } = knob;
    expect(semanticHash(withKnob(unbounded))).toBe(hash);
    expect(
      semanticHash(withKnob({ ...knob, bounds: { ...knob.bounds, metal: { min: 32, max: 256 } } })),
    ).toBe(hash);
    // What the kernel computes or prints is hashed.
    expect(semanticHash(withKnob({ ...knob, default: 128 }))).not.toBe(hash);
    expect(semanticHash(withKnob({ ...knob, description: 'threads' }))).not.toBe(hash);
    expect(semanticHash({ ...rmsnorm, body: rmsnorm.body.slice(1) })).not.toBe(hash);
  });

  it('hashes a value that is not a spec as it is', () => {
    for (const value of [{ schedule: 'x' }, { schedule: [1, null] }, [1, 2], 'spec'])
      expect(semanticHash(value)).toBe(blake3Hex(canonicalJson(value)));
    expect(semanticHash({ schedule: [{ bounds: 1, name: 'a' }] })).toBe(
      blake3Hex(canonicalJson({ schedule: [{ name: 'a' }] })),
    );
  });

  it('differs between kernels and changes with any field', () => {
    const affine = getKernel('affine-f32').spec;
    const rmsnorm = getKernel('rmsnorm').spec;
    expect(semanticHash(affine)).not.toBe(semanticHash(rmsnorm));
    expect(semanticHash({ ...affine, semanticVersion: 2 })).not.toBe(semanticHash(affine));
    expect(semanticHash({ ...affine, description: `${affine.description}.` })).not.toBe(
      semanticHash(affine),
    );
  });

  it('does not depend on key order', () => {
    const affine = getKernel('affine-f32').spec;
    const reversed = Object.fromEntries(Object.entries(affine).reverse());
    expect(Object.keys(reversed)[0]).toBe('body');
    expect(semanticHash(reversed)).toBe(semanticHash(affine));
  });
});

describe('canonicalJson keeps apart what backends print apart', () => {
  it('writes -0 as -0, which parses back to -0', () => {
    expect(canonicalJson(-0)).toBe('-0');
    expect(canonicalJson({ value: -0 })).not.toBe(canonicalJson({ value: 0 }));
    expect(Object.is(JSON.parse(canonicalJson([-0]))[0], -0)).toBe(true);
  });

  it('writes non-finite numbers by name, not as null', () => {
    expect(canonicalJson([Number.NaN, Infinity, -Infinity, null])).toBe(
      '[NaN,Infinity,-Infinity,null]',
    );
  });

  it('gives specs with a 0 and a -0 constant different semantic hashes', () => {
    const spec = JSON.parse(JSON.stringify(getKernel('affine-f32').spec)) as { body: unknown[] };
    const withConst = (value: number) => ({
      ...spec,
      body: [
        { op: 'let', name: 'zero', type: 'f32', value: { op: 'const', type: 'f32', value } },
        ...spec.body,
      ],
    });
    expect(semanticHash(withConst(-0))).not.toBe(semanticHash(withConst(0)));
    expect(semanticHash(withConst(0))).toBe(semanticHash(withConst(0)));
  });
});
