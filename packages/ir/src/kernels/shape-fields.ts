// The field check every multi-field catalog shape starts with (decode attention, rope, kv-store).
import type { ValidationIssue } from '../errors.js';
import type { Shape } from './catalog-kernel.js';

/** Shape values are u32 params: every one stays below this. */
export const U32_LIMIT = 2 ** 32;

/**
 * The fields `names` of `shape`, each a whole number from `least(name)` up to below 2^32 (absent
 * ones take `fallback(name)` when it gives a value); pushes one issue at the field's path for each
 * that is not, and returns those that are.
 */
export function checkShapeFields<N extends string>(
  shape: Shape,
  names: readonly N[],
  issues: ValidationIssue[],
  least: (name: N) => number,
  fallback: (name: N) => number | undefined = () => undefined,
): Partial<Record<N, number>> {
  const values: Partial<Record<N, number>> = {};
  for (const name of names) {
    const value = shape[name] ?? fallback(name);
    const lowest = least(name);
    if (value === undefined) issues.push({ path: name, message: 'is missing' });
    else if (!Number.isInteger(value))
      issues.push({ path: name, message: `${value} is not a whole number` });
    else if (value < lowest)
      issues.push({ path: name, message: `${value} is not at least ${lowest}` });
    else if (value >= U32_LIMIT)
      issues.push({ path: name, message: `${value} does not fit a u32 param` });
    else values[name] = value;
  }
  return values;
}
