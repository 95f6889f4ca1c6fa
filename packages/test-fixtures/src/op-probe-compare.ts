import { f16Bits, interpret, type ScalarType, type UnaryOp } from '@forge/ir';
import { opProbeInputs, opProbeResults, type OpProbe, type OpProbeCase } from './op-probe.js';

/** The interpreter's output words for `probe`: the reference every engine is compared with. */
export function interpretOpProbe(probe: OpProbe): Uint32Array {
  const { buffers, params } = opProbeInputs(probe);
  interpret(probe.spec, { buffers, params });
  return opProbeResults(probe, buffers);
}

/**
 * The ops the IR documents as approximate on GPUs (`rsqrt`, `exp2`, `log2`: the last bits may
 * differ), with the distance in units in the last place an engine may be from the interpreter.
 */
export const APPROXIMATE_OPS: Readonly<Partial<Record<UnaryOp, number>>> = {
  rsqrt: 2,
  exp2: 2,
  log2: 2,
};

/** A float result's bits (f32, or f16 in the low 16) as an integer that orders like the value. */
function ordered(bits: number, type: ScalarType): number {
  const sign = type === 'f16' ? 0x8000 : 0x80000000;
  const magnitude = bits & (sign - 1);
  return (bits & sign) !== 0 ? -magnitude : magnitude;
}

/** Whether float result bits of `type` are a NaN. */
export function isNaNBits(bits: number, type: ScalarType): boolean {
  const [exponent, mantissa] = type === 'f16' ? [0x7c00, 0x3ff] : [0x7f800000, 0x7fffff];
  return (bits & exponent) === exponent && (bits & mantissa) !== 0;
}

/** Whether two pack_half words hold the same halves, any NaN half equal to any NaN half. */
function sameHalves(expected: number, actual: number): boolean {
  return [0, 16].every((shift) => {
    const [want, got] = [(expected >>> shift) & 0xffff, (actual >>> shift) & 0xffff];
    return want === got || (isNaNBits(want, 'f16') && isNaNBits(got, 'f16'));
  });
}

/** Distance in ulps of `type` between two float results. */
const ulps = (expected: number, actual: number, type: ScalarType): number =>
  Math.abs(ordered(expected, type) - ordered(actual, type));

/** One case's result on one input pair that an engine got wrong. */
export interface OpProbeMismatch {
  readonly case: OpProbeCase;
  readonly a: number | boolean;
  readonly b: number | boolean;
  readonly expected: number;
  readonly actual: number;
}

const show = (value: number | boolean): string => (Object.is(value, -0) ? '-0' : String(value));

/** Describes a mismatch on one line: op, types, inputs, and both engines' result bits. */
export function describeMismatch(m: OpProbeMismatch): string {
  const hex = (bits: number): string => `0x${bits.toString(16).padStart(8, '0')}`;
  const { op, from, to } = m.case;
  return `${op} ${from}->${to} (${show(m.a)}, ${show(m.b)}): interpreter ${hex(m.expected)}, engine ${hex(m.actual)}`; // prettier-ignore
}

/**
 * A documented way an engine's result may differ from the interpreter's, with the reason; a test
 * lists its engine's and checks each one still explains some result, so none outlives its cause.
 */
export interface EngineDifference {
  readonly reason: string;
  readonly covers: (mismatch: OpProbeMismatch) => boolean;
}

/** What comparing an engine's results found: unexplained mismatches and each difference's uses. */
export interface OpProbeComparison {
  readonly mismatches: readonly OpProbeMismatch[];
  /** Per `EngineDifference.reason`, how many results it explained. */
  readonly explained: Readonly<Record<string, number>>;
  /** How many results of the approximate ops differed from the interpreter's within tolerance. */
  readonly approximate: number;
}

/**
 * Compares an engine's results `actual` with the interpreter's `expected`: bitwise, except that any
 * NaN equals any NaN, also in a `pack_half` word's halves (the IR leaves NaN payloads unspecified) and the approximate ops may be
 * `APPROXIMATE_OPS[op]` ulps off; a mismatch one of `differences` covers counts as explained.
 */
export function compareOpProbe(
  probe: OpProbe,
  expected: Uint32Array,
  actual: Uint32Array,
  differences: readonly EngineDifference[] = [],
): OpProbeComparison {
  const mismatches: OpProbeMismatch[] = [];
  let approximate = 0;
  const explained: Record<string, number> = Object.fromEntries(differences.map((d) => [d.reason, 0])); // prettier-ignore
  const pairs = probe.pairs.length;
  probe.cases.forEach((c, slot) => {
    const float = c.to === 'f32' || c.to === 'f16';
    const tolerance = APPROXIMATE_OPS[c.op as UnaryOp] ?? 0;
    probe.pairs.forEach(([a, b], pair) => {
      const want = expected[slot * pairs + pair] ?? 0;
      const got = actual[slot * pairs + pair] ?? 0;
      if (want === got) return;
      if (float && isNaNBits(want, c.to) && isNaNBits(got, c.to)) return;
      if (c.op === 'pack_half' && sameHalves(want, got)) return;
      if (float && tolerance > 0 && !isNaNBits(want, c.to) && ulps(want, got, c.to) <= tolerance)
        return;
      const mismatch = { case: c, a, b, expected: want, actual: got };
      const difference = differences.find((candidate) => candidate.covers(mismatch));
      if (difference === undefined) mismatches.push(mismatch);
      else explained[difference.reason] = (explained[difference.reason] ?? 0) + 1;
    });
  });
  return { mismatches, explained, approximate };
}

/** The bits a float result of `type` holding `value` has in a probe's results. */
export function floatResultBits(value: number, type: 'f32' | 'f16'): number {
  if (type === 'f16') return f16Bits(value);
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  return view.getUint32(0);
}
