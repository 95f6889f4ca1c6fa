import { ValidationError } from '../errors.js';
import { f16Bits, f16FromBits } from '../f16.js';
import type { ElementType } from '../types.js';
import { outOfBounds } from './faults.js';

/** Buffer storage per element type; f16 elements are kept as their 16-bit patterns. */
export type ElementArray = Float32Array | Uint32Array | Int32Array | Uint16Array;

const ARRAY_OF: Readonly<Record<ElementType, new (length: number) => ElementArray>> = {
  f32: Float32Array,
  u32: Uint32Array,
  i32: Int32Array,
  f16: Uint16Array,
};

/**
 * A zeroed array of `length` elements in the form the interpreter takes for `element` (f16 as a
 * Uint16Array of bit patterns).
 */
export function allocateElements(element: ElementType, length: number): ElementArray {
  return new ARRAY_OF[element](length);
}

// Bit patterns that show a read before any write: a NaN for floats, all ones for integers.
const POISON: Readonly<Record<ElementType, number>> = {
  f32: Number.NaN,
  u32: 0xffffffff,
  i32: -1,
  f16: 0x7e00,
};

/** An array of `length` elements, each a poison value (NaN, or all bits set for integers). */
export function allocatePoisoned(element: ElementType, length: number): ElementArray {
  return allocateElements(element, length).fill(POISON[element]);
}

/** A named array of one element type with bounds-checked element access. */
export class Memory {
  constructor(
    readonly name: string,
    readonly element: ElementType,
    readonly data: ElementArray,
  ) {
    if (!(data instanceof ARRAY_OF[element])) {
      throw new ValidationError([
        {
          path: `buffers.${name}`,
          message: `must be a ${ARRAY_OF[element].name} for ${element} elements`,
        },
      ]);
    }
  }

  read(index: number): number {
    this.check(index, 'read');
    const raw = this.data[index] as number;
    return this.element === 'f16' ? f16FromBits(raw) : raw;
  }

  write(index: number, value: number): void {
    this.check(index, 'write');
    this.data[index] = this.element === 'f16' ? f16Bits(value) : value;
  }

  private check(index: number, access: string): void {
    if (!(index >= 0 && index < this.data.length)) {
      throw outOfBounds(this.name, access, index, this.data.length);
    }
  }
}
