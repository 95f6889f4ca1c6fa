// What a row-streaming mat-vec's first dispatch makes of an x: the scratch a fused quantizer
// (add-rmsnorm-quantize, sdpa-decode-quantize) must write bit for bit.
import { interpret } from '../interpreter/run.js';
import { resolveSchedule } from '../schedule.js';
import { randomQ4kWords } from './gemv-catalog.js';
import { q4kGemv } from './q4k-gemv.js';
import { Rng } from './random.js';

/** q4k-gemv's first dispatch over `x` (n_in values) on the interpreter: its x_quant and x_factors. */
export function gemvQuantized(x: Float32Array): { x_quant: Uint32Array; x_factors: Float32Array } {
  const nIn = x.length;
  const shape = { n_in: nIn, n_out: 1 };
  const scratch = {
    x_quant: new Uint32Array(nIn / 2),
    x_factors: new Float32Array((nIn / 32) * 5),
  };
  const buffers = { w: randomQ4kWords(1, nIn, new Rng(1), 1), x, y: new Float32Array(1) };
  const schedule = resolveSchedule(q4kGemv.spec, 'ptx', {});
  interpret(q4kGemv.spec, { schedule, params: q4kGemv.params(shape), buffers, scratch });
  return scratch;
}
