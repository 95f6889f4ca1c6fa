import { defineKernel, ir } from '@forge/ir';

/**
 * Test data: f32 inputs and the f16 bits round-to-nearest-even gives them, written out by hand so
 * no engine checks itself: ties both ways, subnormals, the overflow threshold and infinities.
 */
export const PACK_HALF_VALUES: readonly (readonly [value: number, bits: number])[] = [
  [1, 0x3c00],
  [-2, 0xc000],
  [0.1, 0x2e66],
  [0.333333343267, 0x3555],
  [1 + 2 ** -11, 0x3c00], // tie: down to the even 1
  [1 + 3 * 2 ** -11, 0x3c02], // tie: up to the even 1 + 2^-9
  [1 + 2 ** -11 + 2 ** -20, 0x3c01], // just past the tie
  [-(2 ** -14), 0x8400], // smallest normal
  [1023 * 2 ** -24, 0x03ff], // largest subnormal
  [2 ** -24, 0x0001], // smallest subnormal
  [2 ** -25, 0x0000], // tie: down to the even 0
  [3 * 2 ** -25, 0x0002], // tie: up to the even 2^-23
  [2 ** -25 + 2 ** -40, 0x0001], // just past the tie
  [-(2 ** -26), 0x8000], // below half the smallest subnormal: -0
  [65504, 0x7bff], // largest finite
  [-65504, 0xfbff],
  [0, 0x0000],
  [-0, 0x8000],
  [65519, 0x7bff], // below the overflow threshold, beyond f16's finite range
  [65520, 0x7c00], // the threshold: a tie, up to infinity
  [-1e6, 0xfc00],
  [3e38, 0x7c00],
  [Infinity, 0x7c00],
  [-Infinity, 0xfc00],
];

/** The values WGSL defines pack2x16float on: within f16's finite range (±65504). */
export const PACK_HALF_IN_RANGE = PACK_HALF_VALUES.filter(([value]) => Math.abs(value) <= 65504);

/** Test data, PACK_HALF_PROBE's input and expected output for `values` (an even count). */
export function packHalfProbeData(values: readonly (readonly [value: number, bits: number])[]): {
  values: Float32Array;
  words: Uint32Array;
} {
  const words = new Uint32Array(values.length / 2);
  words.forEach((_, k) => {
    words[k] = ((values[2 * k]?.[1] ?? 0) | ((values[2 * k + 1]?.[1] ?? 0) << 16)) >>> 0;
  });
  return { values: Float32Array.from(values, ([value]) => value), words };
}

/**
 * Test data, a probe kernel every engine's pack_half test runs: writes out[k] = values[2k] (low
 * half) and values[2k+1] (high half) packed as f16, for k < n.
 */
export const PACK_HALF_PROBE = defineKernel(
  {
    id: 'pack-half-probe',
    semanticVersion: 1,
    entryPoint: 'pack_half_probe',
    description: 'pairs of f32 values rounded to f16 and packed into u32 words',
    buffers: [
      { group: 0, binding: 0, name: 'values', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'u32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
  },
  (b) => {
    const k = b.let('k', b.localId());
    b.if(ir.lt(k, b.param('n')), (then) => {
      const low = then.let('low', then.load('values', ir.mul(k, ir.u32(2))));
      const high = then.let('high', then.load('values', ir.add(ir.mul(k, ir.u32(2)), ir.u32(1))));
      then.store('out', k, ir.packHalf(low, high));
    });
  },
);
