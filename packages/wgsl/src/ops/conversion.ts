import type { ScalarType } from '@forge/ir';
import { wgslType } from './types.js';

/** Value conversion: WGSL's `T(x)` rounds to nearest into floats and truncates toward zero into integers. */
export function convertText(operand: string, to: ScalarType): string {
  return `${wgslType(to)}(${operand})`;
}

export function bitcastText(operand: string, to: ScalarType): string {
  return `bitcast<${wgslType(to)}>(${operand})`;
}
