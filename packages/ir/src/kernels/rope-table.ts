// The host side of rotary position embedding: the cos/sin table the `rope` kernel reads.
import { ValidationError, type ValidationIssue } from '../errors.js';

/** The frequency base of the catalog's rope cases and of Llama 1/2 (`rope.freq_base` 10000). */
export const ROPE_FREQ_BASE = 10000;

/**
 * The angle table of rotary position embedding: `[maxCtx][headDim / 2][2]` f32 holding (cos θ,
 * sin θ) with θ = pos · freqBase^(−2i/headDim) for every position `pos` < maxCtx and pair `i` <
 * headDim/2, computed in float64 and rounded once to f32 (the IR has no sin/cos, and GPU ones are
 * far too coarse for θ in the thousands of radians). A model runner builds it once per model; the
 * `rope` kernel reads row `pos`. Throws a ValidationError naming `maxCtx`, `headDim` (a positive
 * even number) or `freqBase` (a finite number above 1).
 */
export function ropeTable(maxCtx: number, headDim: number, freqBase: number): Float32Array {
  const issues: ValidationIssue[] = [];
  if (!Number.isInteger(maxCtx) || maxCtx < 1)
    issues.push({ path: 'maxCtx', message: `${maxCtx} is not a positive whole number` });
  if (!Number.isInteger(headDim) || headDim < 2 || headDim % 2 !== 0)
    issues.push({ path: 'headDim', message: `${headDim} is not a positive even number` });
  if (!Number.isFinite(freqBase) || freqBase <= 1)
    issues.push({ path: 'freqBase', message: `${freqBase} is not a finite number above 1` });
  if (issues.length > 0) throw new ValidationError(issues);
  const half = headDim / 2;
  const table = new Float32Array(maxCtx * headDim);
  // exp(−(2i/d)·ln base) rather than the reference's pow, so one slip cannot hide in both.
  const frequencies = Array.from({ length: half }, (_, i) =>
    Math.exp((-2 * i * Math.log(freqBase)) / headDim),
  );
  for (let pos = 0; pos < maxCtx; pos++)
    frequencies.forEach((frequency, i) => {
      const theta = pos * frequency;
      table[(pos * half + i) * 2] = Math.cos(theta);
      table[(pos * half + i) * 2 + 1] = Math.sin(theta);
    });
  return table;
}
