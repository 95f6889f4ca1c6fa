import { UsageError } from './errors.js';

/** Integer types a command line can give a value of, with their ranges. */
export const INTEGER_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  u8: [0n, 0xffn],
  u16: [0n, 0xffffn],
  u32: [0n, 0xffff_ffffn],
  i32: [-(2n ** 31n), 2n ** 31n - 1n],
  u64: [0n, 2n ** 64n - 1n],
};

/** A decimal integer in [min, max], or undefined when the text is not one. */
export function integerIn(text: string, min: bigint, max: bigint): bigint | undefined {
  if (!/^-?\d{1,30}$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= min && value <= max ? value : undefined;
}

/** A decimal number that is finite as an f32 (no overflow to infinity), or undefined. */
export function finiteF32(text: string): number | undefined {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return undefined;
  const value = Math.fround(Number(text));
  return Number.isFinite(value) ? value : undefined;
}

/** The value of `type` that `text` spells, or a message saying why it is not one. */
export function typedValue(type: string, text: string): number | bigint | string {
  if (type === 'f32')
    return finiteF32(text) ?? `'${text}' is not a finite f32 number (decimal, at most ~3.4e38)`;
  const range = Object.hasOwn(INTEGER_RANGES, type) ? INTEGER_RANGES[type] : undefined;
  if (range === undefined) return `unknown type '${type}'`;
  return (
    integerIn(text, range[0], range[1]) ??
    `'${text}' is not ${/^[if]/.test(type) ? 'an' : 'a'} ${type} (an integer in [${range[0]}, ${range[1]}])`
  );
}

/** A count option: a decimal integer in [min, max]; anything else is a UsageError naming it. */
export function countOption(option: string, text: string, min: number, max: number): number {
  const value = integerIn(text, BigInt(min), BigInt(max));
  if (value === undefined)
    throw new UsageError(`${option}: '${text}' is not an integer in [${min}, ${max}]`);
  return Number(value);
}
