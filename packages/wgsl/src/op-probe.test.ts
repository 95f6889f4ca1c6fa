import { afterAll, describe, expect, it } from 'vitest';
import { roundTo } from '@forge/ir';
import {
  OP_PROBES,
  compareOpProbe,
  describeMismatch,
  floatResultBits,
  interpretOpProbe,
  opProbeInputs,
  opProbeResults,
  type EngineDifference,
  type OpProbeMismatch,
} from '@forge/test-fixtures';
import { emitWgsl } from './emit.js';
import { closeSharedWebGpu, runWgsl, sharedWebGpu } from './runner/index.js';
import { wgslTarget } from './targets.js';

afterAll(closeSharedWebGpu);

const nonFinite = (value: number | boolean): boolean => !Number.isFinite(value);
const isFloat = (type: string): type is 'f32' | 'f16' => type === 'f32' || type === 'f16';
const subnormal = (value: number | boolean): boolean =>
  value !== 0 && Math.abs(Number(value)) < 2 ** -126;

/**
 * Where WebGPU may differ from the interpreter, each allowed by the WGSL spec (§15.7.2) and seen on
 * lavapipe; every other result of every op must match bit for bit.
 */
const WGSL_DIFFERENCES: readonly EngineDifference[] = [
  {
    reason: 'fma may round the product first (WGSL: accuracy "inherited from e1 * e2 + e3")',
    covers: ({ case: c, a, b, actual }: OpProbeMismatch) => {
      if (c.op !== 'fma' || !isFloat(c.to)) return false;
      const [x, y] = [roundTo(c.to, Number(a)), roundTo(c.to, Number(b))];
      return actual === floatResultBits(roundTo(c.to, roundTo(c.to, x * y) + x), c.to);
    },
  },
  {
    reason: 'min/max may ignore the sign of zero (WGSL: "may ignore the sign field of a zero")',
    covers: ({ case: c, a, b, actual }) =>
      (c.op === 'min' || c.op === 'max') &&
      a === 0 &&
      b === 0 &&
      (actual & (c.to === 'f16' ? 0x7fff : 0x7fffffff)) === 0,
  },
  {
    reason:
      'NaN and infinities are indeterminate (WGSL finite-math assumption): != of a NaN, float-to-int conversion of NaN or ±Inf',
    covers: ({ case: c, a, b }) =>
      (c.op === 'ne' && (Number.isNaN(a) || Number.isNaN(b))) ||
      (c.op === 'convert' && isFloat(c.from) && !isFloat(c.to) && nonFinite(a)),
  },
  {
    reason: 'log2 may flush a subnormal input to zero, and log2(0) = -Inf is then indeterminate',
    covers: ({ case: c, a }) => c.op === 'log2' && c.from === 'f32' && subnormal(a),
  },
];

// Every registry op on every type it takes, on WebGPU against the interpreter bit for bit (NaN
// payloads and the documented approximate ops aside); f16 operands need the f16 feature.
const RUNS = OP_PROBES.map(
  (probe) =>
    [`${probe.name}, features ${probe.f16 ? 'f16' : 'none'}`, probe, probe.f16 ? ['f16'] : []] as const, // prettier-ignore
);

const explained: Record<string, number> = {};

describe('op probes on WebGPU, against the interpreter', () => {
  it.each(RUNS)('%s', async (_name, probe, features) => {
    const shader = emitWgsl(probe.spec, {}, wgslTarget(features));
    const context = await sharedWebGpu(shader.launch.requiredFeatures ?? []);
    const { buffers, params } = opProbeInputs(probe);
    await runWgsl(context, shader, { buffers, params });
    const actual = opProbeResults(probe, buffers);
    const result = compareOpProbe(probe, interpretOpProbe(probe), actual, WGSL_DIFFERENCES);
    expect(result.mismatches.map(describeMismatch)).toEqual([]);
    for (const [reason, count] of Object.entries(result.explained))
      explained[reason] = (explained[reason] ?? 0) + count;
  });

  it('needs every documented difference, so none outlives its cause', () => {
    for (const { reason } of WGSL_DIFFERENCES) expect(explained[reason], reason).toBeGreaterThan(0);
  });
});
