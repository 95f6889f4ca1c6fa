import { describe, expect, it } from 'vitest';
import { dequantize } from '../quant/formats.js';
import { repack, repackedLayout, unpack } from '../quant/repack.js';
import { unpackWords } from '../quant/words.js';
import { resolveSchedule } from '../schedule.js';
import { Rng } from './random.js';
import { describeGemv, gemvOracle } from './gemv-suite.test-support.js';
import { q6kSoaGemv as kernel } from './q6k-soa-gemv.js';

/** The oracle's 64 x 512 native rows, repacked. */
const repacked = (native: Uint8Array): Uint8Array => repack('q6_K', native, 64, 512);

describeGemv({
  kernel,
  type: 'q6_K',
  prefix: 'Q6_K',
  layout: { fromNative: repacked },
});

describe('q6k-soa-gemv', () => {
  it('takes workgroups of 1 to 8 warps on both targets, naming the knob beyond', () => {
    // ~115 registers a thread keep a step's loads in flight: at most 256 threads (sweep:schedules).
    for (const target of ['ptx', 'wgsl'] as const) {
      for (const workgroupSize of [16, 96 + 1, 288, 384, 1024])
        expect(() => resolveSchedule(kernel.spec, target, { workgroupSize })).toThrow(
          /^schedule\.workgroupSize: \d+ is (outside \[32, 256\]|not a multiple of 32) for (ptx|wgsl)$/,
        );
      for (const workgroupSize of [32, 64, 96, 128, 160, 192, 224, 256])
        expect(resolveSchedule(kernel.spec, target, { workgroupSize })['workgroupSize']).toBe(
          workgroupSize,
        );
    }
  });

  it('takes the repacked layout: 32-byte row strides, padding counted apart', () => {
    const { w, buffers } = gemvOracle('Q6_K', repacked);
    expect(buffers.w.length).toBe(kernel.bufferLengths({ n_in: 512, n_out: 64 })['w']);
    expect(w.length).toBe(28672);
    for (const nIn of [256, 512, 768, 1792, 8192, 11008 - (11008 % 256)]) {
      const shape = { n_in: nIn, n_out: 3 };
      const layout = repackedLayout('q6_K', 3, nIn);
      expect(kernel.weights?.bytes(shape)).toBe(layout.totalBytes);
      expect(kernel.weights?.paddingBytes?.(shape)).toBe(layout.paddingBytes);
      expect(kernel.bufferLengths(shape)['w']).toBe(layout.totalBytes / 4);
    }
  });

  it('takes native rows for a GGUF tensor through repack', () => {
    const { w: native, shape } = gemvOracle('Q6_K');
    expect(kernel.weights?.fromNative?.(native, shape)).toEqual(repacked(native));
  });

  it('generates random blocks with |w| <= magnitude, deterministically', () => {
    const shape = { n_in: 256, n_out: 3 };
    const request = { buffer: 'w', length: 168, shape, magnitude: 2 };
    const words = kernel.generateInput?.({ ...request, rng: new Rng(5) }) ?? new Uint32Array();
    expect(words).toEqual(kernel.generateInput?.({ ...request, rng: new Rng(5) }));
    expect(words.length).toBe(168);
    const native = unpack('q6_K', unpackWords(words, 672), 3, 256);
    const values = dequantize('q6_K', native, 3, 256);
    const largest = values.reduce((max, value) => Math.max(max, Math.abs(value)), 0);
    expect(largest).toBeLessThanOrEqual(2);
    expect(largest).toBeGreaterThan(0.5);
    expect(kernel.generateInput?.({ ...request, buffer: 'x', rng: new Rng(5) })).toBeUndefined();
  });
});
