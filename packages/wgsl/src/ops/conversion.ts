import type { ScalarType } from '@forge/ir';
import { wgslType } from './types.js';

/** Value conversion: WGSL's `T(x)` rounds to nearest into floats and truncates toward zero into integers. */
export function convertText(operand: string, to: ScalarType): string {
  return `${wgslType(to)}(${operand})`;
}

export function bitcastText(operand: string, to: ScalarType): string {
  return `bitcast<${wgslType(to)}>(${operand})`;
}

/** unpack2x16float reads both halves of a u32 as f16 into an f32 pair, needing no `f16` feature. */
export function unpackHalfText(operand: string, half: 0 | 1): string {
  return `unpack2x16float(${operand}).${half === 0 ? 'x' : 'y'}`;
}
