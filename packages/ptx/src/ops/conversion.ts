import type { ScalarType } from '@forge/ir';
import { arithmeticType } from './types.js';

/**
 * The instruction converting `from` to `to` with the IR's semantics: round to nearest even into
 * floats, truncate toward zero into integers (cvt saturates and maps NaN to 0, as the IR does).
 */
export function convertMnemonic(from: ScalarType, to: ScalarType): string | undefined {
  if (from === 'bool' || to === 'bool') return undefined;
  if (from === to) return `mov.${to === 'f16' ? 'b16' : to === 'f32' ? 'f32' : 'b32'}`;
  const integer = (type: ScalarType): boolean => type === 'u32' || type === 'i32';
  if (integer(from) && integer(to)) return 'mov.b32';
  const source = arithmeticType(from);
  const destination = arithmeticType(to);
  if (integer(to)) return `cvt.rzi.${destination}.${source}`;
  // f16 -> f32 is exact, so it takes no rounding modifier.
  if (from === 'f16' && to === 'f32') return 'cvt.f32.f16';
  return `cvt.rn.${destination}.${source}`;
}

export function bitcastMnemonic(from: ScalarType, to: ScalarType): string | undefined {
  const wide = (type: ScalarType): boolean => type === 'u32' || type === 'i32' || type === 'f32';
  return wide(from) && wide(to) ? 'mov.b32' : undefined;
}

/**
 * Splits a b32 register into its two f16 halves, keeping only `half` (0 low, 1 high); the other
 * lane of the vector is the sink `_`, so no register is spent on it. `cvt.f32.f16` then widens exactly.
 */
export function unpackHalfInstructions(
  half: 0 | 1,
  word: string,
  halfRegister: string,
  out: string,
): [string, string] {
  const lanes = half === 0 ? `{${halfRegister}, _}` : `{_, ${halfRegister}}`;
  return [
    `mov.b32 ${lanes}, ${word};`,
    `${convertMnemonic('f16', 'f32')} ${out}, ${halfRegister};`,
  ];
}

/**
 * Rounds two f32 registers to f16 (`cvt.rn`: nearest even, overflow to ±inf, NaN to a quiet NaN)
 * and joins them into a b32, `lo` in the low half; sm_75 has no `cvt.rn.f16x2.f32`, so every
 * target takes the same three instructions.
 */
export function packHalfInstructions(
  lo: string,
  hi: string,
  halves: readonly [string, string],
  out: string,
): [string, string, string] {
  const convert = convertMnemonic('f32', 'f16');
  return [
    `${convert} ${halves[0]}, ${lo};`,
    `${convert} ${halves[1]}, ${hi};`,
    `mov.b32 ${out}, {${halves[0]}, ${halves[1]}};`,
  ];
}
