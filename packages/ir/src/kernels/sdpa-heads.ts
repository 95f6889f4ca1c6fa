// Decode attention's `heads` knob, its per-head vector loads, stores and sums, and typed reads.
import type { Expr } from '../body.js';
import type { BodyBuilder, Declared } from '../builder.js';
import { InternalError } from '../errors.js';
import { add } from '../expressions.js';
import type { ScalarType } from '../types.js';
import type { Value } from '../expression-methods.js';
import { itemAt, type Pair } from './tuples.js';

export type SdpaBuilder = BodyBuilder<Declared>;

/** The most query heads a workgroup carries. */
export const SDPA_MAX_HEADS = 8;
/** The knob's default: a GQA group of 4 or fewer shares every K/V load. */
export const SDPA_DEFAULT_HEADS = 4;
/** The knob's values; the default's variant is built first, so its locals keep plain names. */
export const SDPA_HEAD_COUNTS = [SDPA_DEFAULT_HEADS, 1, 2, 8] as const;
export type SdpaHeads = (typeof SDPA_HEAD_COUNTS)[number];

/** `[f(0), …, f(n − 1)]`, called in that order. */
export const times = <T>(n: number, f: (i: number) => T): T[] =>
  Array.from({ length: n }, (_, i) => f(i));

const isValue = <T extends ScalarType>(type: T, value: Value): value is Value<T> =>
  value.type === type;

/** `value`, checked to be a `type` (the builder types both caches' memory and params loosely). */
export function typed<T extends ScalarType>(type: T, value: Value): Value<T> {
  if (!isValue(type, value))
    throw new InternalError('sdpa', `a ${value.type} where a ${type} belongs`);
  return value;
}

/** A u32 param. */
export const u32Param = (b: SdpaBuilder, name: string) => typed('u32', b.param(name));

/** Vector pieces of n words, as [first, width]: one word, one vec2 or vec4, or two vec4s. */
const pieces = (n: number): readonly Pair<number>[] => (n === 8 ? [[0, 4], [4, 4]] : [[0, n]]); // prettier-ignore
const offset = (index: Expr<'u32'>, first: number) => (first === 0 ? index : add(index, first));

/** memory[index + h] for h < n, named `hint`, in the widest aligned loads (index a multiple of min(n, 4)). */
export function loadHeads(b: SdpaBuilder, memory: string, index: Expr<'u32'>, n: SdpaHeads, hint: string): Value<'f32'>[] {
  return pieces(n).flatMap(([first, width]) => {
    if (width === 1) return [b.let(hint, typed('f32', b.load(memory, offset(index, first))))];
    return b.loadVector(memory, offset(index, first), times(width, () => hint)).map((value) => typed('f32', value));
  });
} // prettier-ignore

/** memory[index + h] = values[h] for h < values.length (1, 2, 4 or 8), as loadHeads reads them. */
export function storeHeads(b: SdpaBuilder, memory: string, index: Expr<'u32'>, values: readonly Expr<'f32'>[]): void {
  for (const [first, width] of pieces(values.length)) {
    const [one, two, three, four] = values.slice(first, first + width);
    if (one === undefined || two === undefined) b.store(memory, offset(index, first), itemAt(values, first));
    else if (three === undefined || four === undefined) b.storeVector(memory, offset(index, first), [one, two]);
    else b.storeVector(memory, offset(index, first), [one, two, three, four]);
  }
} // prettier-ignore
