import type { ScalarType } from '@forge/ir';
import { wgslType } from './types.js';

// WGSL's `i32(x)`/`u32(x)` clamp an f32 to the largest f32 below 2^31/2^32 (2^31 - 128, 2^32 - 256)
// where the IR saturates to the type's maximum: from that bound on, the maximum is selected.
const F32_SATURATION: Partial<Record<ScalarType, readonly [bound: string, max: string]>> = {
  i32: ['2147483648.0f', '2147483647i'],
  u32: ['4294967296.0f', '4294967295u'],
};

/**
 * Value conversion: WGSL's `T(x)` rounds to nearest into floats and truncates toward zero into
 * integers; an f32 at or past an integer type's range gives its maximum, as the IR says.
 */
export function convertText(operand: string, to: ScalarType, from: ScalarType): string {
  const text = `${wgslType(to)}(${operand})`;
  const saturation = from === 'f32' ? F32_SATURATION[to] : undefined;
  if (saturation === undefined) return text;
  const [bound, max] = saturation;
  return `select(${text}, ${max}, ${operand} >= ${bound})`;
}

export function bitcastText(operand: string, to: ScalarType): string {
  return `bitcast<${wgslType(to)}>(${operand})`;
}

/** unpack2x16float reads both halves of a u32 as f16 into an f32 pair, needing no `f16` feature. */
export function unpackHalfText(operand: string, half: 0 | 1): string {
  return `unpack2x16float(${operand}).${half === 0 ? 'x' : 'y'}`;
}

/**
 * pack2x16float rounds both f32s to f16 and joins them, `lo` in the low half, needing no `f16`
 * feature. WGSL leaves the result indeterminate when either is outside f16's finite range (±65504,
 * NaN, infinities) and lets inexact values round either way; lavapipe rounds to nearest even and
 * gives ±inf and NaN as the IR says (the op probes check both).
 */
export function packHalfText(lo: string, hi: string): string {
  return `pack2x16float(vec2<f32>(${lo}, ${hi}))`;
}
