import { describe, expect, it } from 'vitest';
import { countOption, finiteF32, typedValue } from './numbers.js';

describe('command-line numbers', () => {
  it('take each integer type at its bounds and refuse one past them', () => {
    expect(typedValue('u32', '4294967295')).toBe(4294967295n);
    expect(typedValue('u32', '4294967296')).toMatch(/is not a u32/);
    expect(typedValue('u32', '-5')).toMatch(/is not a u32/);
    expect(typedValue('i32', '-2147483648')).toBe(-2147483648n);
    expect(typedValue('i32', '99999999999')).toMatch(/is not an i32/);
    expect(typedValue('u64', '18446744073709551615')).toBe(2n ** 64n - 1n);
    expect(typedValue('u64', '1.5')).toMatch(/is not a u64/);
    expect(typedValue('u8', '256')).toMatch(/is not a u8/);
    expect(typedValue('f64', '1')).toBe("unknown type 'f64'");
    expect(typedValue('__proto__', '1')).toBe("unknown type '__proto__'");
  });

  it('take f32 values that stay finite as f32', () => {
    expect(finiteF32('1.5')).toBe(1.5);
    expect(finiteF32('-3e38')).toBe(Math.fround(-3e38));
    expect(finiteF32('1e39')).toBeUndefined();
    expect(finiteF32('Infinity')).toBeUndefined();
    expect(finiteF32('0x10')).toBeUndefined();
    expect(finiteF32('')).toBeUndefined();
  });

  it('range-check counts and name the option', () => {
    expect(countOption('--max-steps', '1000', 1, 1e12)).toBe(1000);
    expect(() => countOption('--max-steps', '0', 1, 1e12)).toThrow(
      "--max-steps: '0' is not an integer in [1, 1000000000000]",
    );
    expect(() => countOption('--grid x', '1e3', 1, 10)).toThrow(/--grid x: '1e3'/);
  });
});
