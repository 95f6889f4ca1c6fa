// Shared decoding helpers: splitting modifiers into types and words, errors, and the AluOp builder.
import { isPtxType, type PtxType } from '../ast.js';
import type { AluOp, Bits } from './types.js';
import type { Rounding } from './rounding.js';

export { isPtxType };

/** The error for a known opcode whose modifier or type combination is not implemented. */
export function unsupported(opcode: string, modifiers: readonly string[], detail: string): Error {
  return new Error(`unsupported ${[opcode, ...modifiers].join('.')}: ${detail}`);
}

/** An instruction's modifiers split into its types (in order) and its other words. */
export interface Decoded {
  readonly opcode: string;
  readonly modifiers: readonly string[];
  readonly types: readonly PtxType[];
  readonly words: ReadonlySet<string>;
  /** Throws the unsupported-combination error with this detail. */
  fail(detail: string): never;
  has(word: string): boolean;
  /** The only type; fails unless there is exactly one and it is among `allowed`. */
  type<T extends PtxType>(allowed: readonly T[]): T;
  /** The rounding word present, or `fallback` (fails on two, or on one outside `allowed`). */
  rounding(allowed: readonly string[], fallback?: string): string | undefined;
}

/** Splits modifiers; any word outside `allowed` (types aside) is rejected. */
export function decode(
  opcode: string,
  modifiers: readonly string[],
  allowed: readonly string[],
): Decoded {
  const types: PtxType[] = [];
  const words = new Set<string>();
  const fail = (detail: string): never => {
    throw unsupported(opcode, modifiers, detail);
  };
  for (const modifier of modifiers) {
    if (isPtxType(modifier)) types.push(modifier);
    else if (!allowed.includes(modifier)) fail(`modifier .${modifier}`);
    else if (words.has(modifier)) fail(`repeated .${modifier}`);
    else words.add(modifier);
  }
  return {
    opcode,
    modifiers,
    types,
    words,
    fail,
    has: (word) => words.has(word),
    type<T extends PtxType>(allowedTypes: readonly T[]): T {
      const only = types[0];
      if (types.length !== 1 || only === undefined) return fail('expected exactly one type');
      if (!(allowedTypes as readonly PtxType[]).includes(only)) return fail(`type .${only}`);
      return only as T;
    },
    rounding(allowedRoundings: readonly string[], fallback?: string): string | undefined {
      const present = [...words].filter((word) => ROUNDING_WORDS.includes(word));
      if (present.length > 1) return fail('more than one rounding modifier');
      const chosen = present[0] ?? fallback;
      if (chosen !== undefined && !allowedRoundings.includes(chosen)) fail(`rounding .${chosen}`);
      return chosen;
    },
  };
}

export const ROUNDING_WORDS: readonly string[] = [
  'rn',
  'rz',
  'rm',
  'rp',
  'rni',
  'rzi',
  'rmi',
  'rpi',
  'rna',
];
export const FLOAT_ROUNDINGS: readonly Rounding[] = ['rn', 'rz', 'rm', 'rp'];

/** Integer rounding modifier (.rni …) as the float rounding it applies. */
export const integralRounding = (word: string): Rounding => word.slice(0, 2) as Rounding;

/** Builds an AluOp. */
export function aluOp(
  family: string,
  sourceTypes: readonly PtxType[],
  destinationTypes: readonly PtxType[],
  evaluate: (sources: readonly Bits[]) => readonly Bits[],
): AluOp {
  return { family, sourceTypes, destinationTypes, evaluate };
}

/** A source as a number (≤32-bit types); tolerates a bigint. */
export const num = (value: Bits | undefined): number =>
  typeof value === 'number' ? value : value === undefined ? 0 : Number(value);

/** A source as a bigint (64-bit types); tolerates a number. */
export const big = (value: Bits | undefined): bigint =>
  typeof value === 'bigint' ? value : value === undefined ? 0n : BigInt(value);

export type IntType = 'u8' | 'u16' | 'u32' | 'u64' | 's8' | 's16' | 's32' | 's64';
export const INT_TYPES: readonly IntType[] = ['u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64'];
export const isIntType = (type: PtxType): type is IntType =>
  (INT_TYPES as readonly PtxType[]).includes(type);

/** Bit width of a ≤64-bit type (pred counts as 1). */
export function widthOf(type: PtxType): number {
  if (type === 'pred') return 1;
  if (type === 'f16x2' || type === 'bf16x2') return 32;
  const digits = /\d+/.exec(type);
  return digits === null ? 0 : Number(digits[0]);
}

export const isSigned = (type: PtxType): boolean => type.startsWith('s');

/** A ≤32-bit pattern read as a signed integer of `width` bits. */
export function toSigned(bits: number, width: number): number {
  return width === 32 ? bits | 0 : (bits << (32 - width)) >> (32 - width);
}

/** An integer (|value| < 2^53) wrapped to a `width`-bit pattern, width ≤ 32 (ToUint32 is exact mod 2^32). */
export function wrap(value: number, width: number): number {
  return width === 32 ? value >>> 0 : value & ((1 << width) - 1);
}
