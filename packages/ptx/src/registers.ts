import type { ScalarType } from '@forge/ir';

/** Register classes: predicates, 16-bit (f16), 32-bit (u32/i32), f32 and 64-bit addresses. */
export type RegisterClass = 'p' | 'h' | 'r' | 'f' | 'rd';

const DECLARATIONS: readonly (readonly [RegisterClass, string])[] = [
  ['p', '.pred'],
  ['h', '.b16'],
  ['r', '.b32'],
  ['f', '.f32'],
  ['rd', '.b64'],
];

export function registerClass(type: ScalarType): RegisterClass {
  return { bool: 'p', f16: 'h', u32: 'r', i32: 'r', f32: 'f' }[type] as RegisterClass;
}

/** Hands out virtual registers (%f1, %r2, ...); ptxas does the real allocation. */
export class RegisterAllocator {
  private readonly counts = new Map<RegisterClass, number>();

  next(kind: RegisterClass): string {
    const count = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, count);
    return `%${kind}${count}`;
  }

  forType(type: ScalarType): string {
    return this.next(registerClass(type));
  }

  /** `.reg` lines for every class used, in a fixed order. */
  declarations(): string[] {
    return DECLARATIONS.filter(([kind]) => this.counts.has(kind)).map(
      ([kind, type]) => `.reg ${type} %${kind}<${(this.counts.get(kind) ?? 0) + 1}>;`,
    );
  }
}
