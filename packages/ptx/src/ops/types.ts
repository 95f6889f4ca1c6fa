import type { ScalarType } from '@forge/ir';

/** PTX type suffix for arithmetic on an IR type. */
export function arithmeticType(type: ScalarType): string {
  return { f32: 'f32', f16: 'f16', u32: 'u32', i32: 's32', bool: 'pred' }[type];
}

/** PTX bit-type suffix of the same width as an IR type. */
export function bitType(type: ScalarType): string {
  return { f32: 'b32', f16: 'b16', u32: 'b32', i32: 'b32', bool: 'pred' }[type];
}

/** The 32-bit pattern of an f32 as a PTX immediate (`0f3F800000`). */
export function f32Immediate(value: number): string {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  return `0f${view.getUint32(0).toString(16).toUpperCase().padStart(8, '0')}`;
}
