import type { ScalarType } from '@forge/ir';
import { wgslType } from './types.js';

// WGSL's `i32(x)`/`u32(x)` clamp an f32 to the largest f32 below 2^31/2^32 (2^31 - 128, 2^32 - 256)
// where the IR saturates to the type's maximum: from that bound on, the maximum is selected. The
// test reads the operand twice, so it lives in a module function (forge_f32_to_i32 / _u32): inline,
// nested conversions would double the text at every level.
const F32_SATURATION: Partial<Record<ScalarType, readonly [bound: string, max: string]>> = {
  i32: ['2147483648.0f', '2147483647i'],
  u32: ['4294967296.0f', '4294967295u'],
};

/** The module function that converts an f32 to `to` with the IR's saturation, if `to` needs one. */
export function saturatingConversion(to: ScalarType, from: ScalarType): string | undefined {
  return from === 'f32' && F32_SATURATION[to] !== undefined ? `forge_f32_to_${to}` : undefined;
}

/** The WGSL definition of saturatingConversion's function for `to`. */
export function saturatingConversionFunction(to: ScalarType): string[] {
  const [bound, max] = F32_SATURATION[to] ?? ['', ''];
  return [
    `fn forge_f32_to_${to}(value: f32) -> ${wgslType(to)} {`,
    `  return select(${wgslType(to)}(value), ${max}, value >= ${bound});`,
    '}',
  ];
}

/**
 * Value conversion: WGSL's `T(x)` rounds to nearest into floats and truncates toward zero into
 * integers; an f32 at or past an integer type's range gives its maximum, as the IR says (through
 * saturatingConversion's function).
 */
export function convertText(operand: string, to: ScalarType, from: ScalarType): string {
  const saturating = saturatingConversion(to, from);
  return saturating === undefined ? `${wgslType(to)}(${operand})` : `${saturating}(${operand})`;
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
