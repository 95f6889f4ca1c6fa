import type { ScalarType } from '@forge/ir';

export function wgslType(type: ScalarType): string {
  return type;
}

/** A WGSL literal with exactly the IR constant's value, parenthesized when negative. */
export function wgslLiteral(type: ScalarType, value: number | boolean): string {
  if (type === 'bool') return value === true ? 'true' : 'false';
  const number = value as number;
  switch (type) {
    case 'u32':
      return `${number >>> 0}u`;
    case 'i32':
      if (number === -(2 ** 31)) return '(-2147483647i - 1i)';
      return number < 0 ? `(-${-number}i)` : `${number}i`;
    case 'f32':
      return floatLiteral(Math.fround(number), 'f');
    case 'f16':
      return floatLiteral(number, 'h');
  }
}

// JS prints the shortest decimal that reads back as the same double, and a double that holds an
// f32 (or f16) value reads back as that value: the literal is exact.
function floatLiteral(value: number, suffix: string): string {
  const magnitude = Object.is(value, -0) ? '0.0' : String(Math.abs(value));
  const text = /[.e]/.test(magnitude) ? magnitude : `${magnitude}.0`;
  return value < 0 || Object.is(value, -0) ? `(-${text}${suffix})` : `${text}${suffix}`;
}
