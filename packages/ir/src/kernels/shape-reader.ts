// A catalog shape's (or its params') fields read by name: the one place an absent field reads 0.
import type { Shape } from './catalog-kernel.js';

/**
 * Field `name` of `shape`, 0 when absent: params and buffer lengths are asked of any shape, and
 * checkShape rejects a 0 size.
 */
export const field = (shape: Shape, name: string): number => shape[name] ?? 0;

/** A reader of `shape`'s fields, typed to the names `N` a kernel declares: `size('head_dim')`. */
export const fields =
  <N extends string = string>(shape: Shape) =>
  (name: N): number =>
    field(shape, name);
