/** Value types of the body IR. `bool` exists only in registers, never in memory. */
export type ScalarType = 'f32' | 'f16' | 'i32' | 'u32' | 'bool';
/** Types a buffer or shared array can hold. */
export type ElementType = 'f32' | 'f16' | 'i32' | 'u32';
/** Types of scalar launch parameters. */
export type ParamType = 'f32' | 'i32' | 'u32';

/** Every ScalarType. */
export const SCALAR_TYPES: readonly ScalarType[] = ['f32', 'f16', 'i32', 'u32', 'bool'];
/** Every ElementType. */
export const ELEMENT_TYPES: readonly ElementType[] = ['f32', 'f16', 'i32', 'u32'];
/** Every ParamType. */
export const PARAM_TYPES: readonly ParamType[] = ['f32', 'i32', 'u32'];

/** Bytes per element in a buffer or shared array; f16 elements take 2. */
export const ELEMENT_BYTES: Readonly<Record<ElementType, number>> = {
  f32: 4,
  f16: 2,
  i32: 4,
  u32: 4,
};

/** Whether `type` is f32 or f16. */
export function isFloatType(type: ScalarType): type is 'f32' | 'f16' {
  return type === 'f32' || type === 'f16';
}

/** Whether `type` is u32 or i32. */
export function isIntegerType(type: ScalarType): type is 'i32' | 'u32' {
  return type === 'i32' || type === 'u32';
}

/** Whether `type` is anything but bool, i.e. can live in memory. */
export function isNumericType(type: ScalarType): type is ElementType {
  return type !== 'bool';
}

/**
 * Whether `value` is one of the strings in `values`, narrowing it to their type (for checking
 * untrusted JSON).
 */
export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}
