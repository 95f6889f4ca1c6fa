import type { Expr, VarExpr } from '../body.js';
import { localName, type BodyBuilder, type Declared } from '../builder.js';

/** A pair's rows, in the order their statements are emitted. */
export const ROWS = ['a', 'b'] as const;
export type PerRow<T> = Record<'a' | 'b', T>;

/** `value(k)` for row a, then row b. */
export function forRows<T>(value: (k: 'a' | 'b') => T): PerRow<T> {
  return { a: value('a'), b: value('b') };
}

/**
 * Declares one local per key and row, key by key: `perRow(b, { firstWord: (k) => … })` declares
 * `first_word_a` then `first_word_b` (see localName) and returns `{ firstWord: { a, b } }`.
 */
export function perRow<
  M extends Declared,
  R extends Readonly<Record<string, (k: 'a' | 'b') => Expr>>,
>(b: BodyBuilder<M>, locals: R): { [K in keyof R]: PerRow<VarExpr<ReturnType<R[K]>['type']>> } {
  const declared: Record<string, PerRow<VarExpr>> = {};
  for (const [key, value] of Object.entries(locals))
    declared[key] = forRows((k) => b.let(`${localName(key)}_${k}`, value(k)));
  return declared as { [K in keyof R]: PerRow<VarExpr<ReturnType<R[K]>['type']>> };
}

/** `[f(0), f(1), f(2), f(3)]`, called in that order. */
export function four<T>(f: (i: 0 | 1 | 2 | 3) => T): readonly [T, T, T, T] {
  return [f(0), f(1), f(2), f(3)];
}

/** The names `${prefix}0` to `${prefix}3` of a four-element loadVector. */
export const vectorNames = (prefix: string) => four((i) => `${prefix}${i}`);

/** Assigns `values[k]` to each `targets[k]`. */
export function assignEach<M extends Declared>(
  b: BodyBuilder<M>,
  targets: readonly VarExpr<'f32'>[],
  values: readonly Expr<'f32'>[],
): void {
  targets.forEach((target, k) => values[k] && b.assign(target, values[k]));
}
