// Fixed-length views of lists, so kernels destructure typed tuples instead of indexing with `!`.
import { InternalError } from '../errors.js';
import { four } from './locals.js';

export type Four<T> = readonly [T, T, T, T];
export type Pair<T> = readonly [T, T];

/** The item at `index`; a list shorter than a kernel's fixed layout is a bug, so it throws. */
export function itemAt<T>(list: readonly T[], index: number): T {
  const item = list[index];
  if (item === undefined)
    throw new InternalError('kernel layout', `no item ${index} of ${list.length}`);
  return item;
}

/** `[f(0), f(1)]`, called in that order (`four` in locals.ts is its four-item twin). */
export const pair = <T>(f: (i: 0 | 1) => T): Pair<T> => [f(0), f(1)];

/** list[start..start + 3] as a four. */
export const fourAt = <T>(list: readonly T[], start = 0): Four<T> =>
  four((i) => itemAt(list, start + i));

/** `[f(pair[0], 0), f(pair[1], 1)]`, called in that order. */
export const mapPair = <T, U>(pair: Pair<T>, f: (item: T, index: 0 | 1) => U): Pair<U> => [
  f(pair[0], 0),
  f(pair[1], 1),
];

/** One name hint for each of a four-element loadVector's locals (the builder numbers them). */
export const hints = (hint: string): Four<string> => [hint, hint, hint, hint];
