import { defineKernel, ir } from '@forge/ir';

/**
 * Test data: f16 bit patterns and their exact values, written out by hand so no engine checks
 * itself.
 */
export const UNPACK_HALF_VALUES: readonly (readonly [bits: number, value: number])[] = [
  [0x3c00, 1],
  [0xc000, -2],
  [0x0001, 2 ** -24], // smallest subnormal
  [0x8001, -(2 ** -24)],
  [0x03ff, 1023 * 2 ** -24], // largest subnormal
  [0x0400, 2 ** -14], // smallest normal
  [0x7bff, 65504],
  [0x3555, 0.333251953125],
  [0x7c00, Infinity],
  [0xfc00, -Infinity],
  [0x0000, 0],
  [0x8000, -0],
];

/** Test data, UNPACK_HALF_PROBE's input: pattern 2k in the low half of word k, 2k+1 in the high. */
export function unpackHalfProbeWords(): Uint32Array {
  const words = new Uint32Array(UNPACK_HALF_VALUES.length / 2);
  words.forEach((_, k) => {
    const low = UNPACK_HALF_VALUES[2 * k]?.[0] ?? 0;
    const high = UNPACK_HALF_VALUES[2 * k + 1]?.[0] ?? 0;
    words[k] = (low | (high << 16)) >>> 0;
  });
  return words;
}

/**
 * Test data, a probe kernel every engine's unpack_half test runs: writes out[2k] = low half of
 * words[k] and out[2k+1] = its high half, as f32, for k < n.
 */
export const UNPACK_HALF_PROBE = defineKernel(
  {
    id: 'unpack-half-probe',
    semanticVersion: 1,
    entryPoint: 'unpack_half_probe',
    description: 'both f16 halves of each u32 word, widened to f32',
    buffers: [
      { group: 0, binding: 0, name: 'words', element: 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'out', element: 'f32', access: 'read_write' },
    ],
    params: [{ name: 'n', type: 'u32' }],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
  },
  (b) => {
    const k = b.let('k', b.localId());
    b.if(ir.lt(k, b.param('n')), (then) => {
      const word = then.let('word', then.load('words', k));
      const low = ir.mul(k, ir.u32(2));
      then.store('out', low, ir.unpackHalf(word, 0));
      then.store('out', ir.add(low, ir.u32(1)), ir.unpackHalf(word, 1));
    });
  },
);
