import { typeText, type TypeNode } from './parse.test-support.js';
import {
  scalarType,
  wrap,
  type Scalar,
  type Value,
  type ValueType,
} from './values.test-support.js';

// What compiled expressions are: a static type and a closure giving a lane's value. WGSL's abstract
// literals (`1`, `0.5`) stay untyped until their context gives them a type.

/** WGSL the interpreter has no rule for (a construct Forge does not emit). */
export class WgslCompileError extends Error {
  override readonly name = 'WgslCompileError';
}

export type At = (lane: number) => Value;
export interface Compiled {
  /** The type, or `int`/`float` for an abstract literal that takes the type of its context. */
  readonly type: ValueType | 'int' | 'float';
  readonly at: At;
  readonly literal?: number;
  /** The value in every lane, where it is known when compiling (a typed literal, a uniform). */
  readonly constant?: Value;
  /** Whether a subgroup operation is inside (the statement must mark its active lanes). */
  readonly subgroup: boolean;
}
export const SCALARS = new Set<string>(['u32', 'i32', 'f32', 'f16', 'bool']);

/** A scalar or vector type node as a ValueType. */
export function valueType(node: TypeNode): ValueType {
  if (SCALARS.has(node.name) && node.args.length === 0) return scalarType(node.name as Scalar);
  const width = /^vec([234])$/.exec(node.name)?.[1];
  const [element] = node.args;
  if (width !== undefined && typeof element === 'object' && SCALARS.has(element.name))
    return { scalar: element.name as Scalar, width: Number(width) };
  throw new WgslCompileError(`unsupported type ${typeText(node)}`);
}

export const concrete = (compiled: Compiled): ValueType =>
  compiled.type === 'int'
    ? scalarType('i32')
    : compiled.type === 'float'
      ? scalarType('f32')
      : compiled.type;

/** `compiled` with an abstract literal given `type`. */
export function as(compiled: Compiled, type: ValueType): Compiled {
  if (typeof compiled.type === 'object') return compiled;
  const value = wrap(type.scalar, compiled.literal ?? 0);
  return { type, at: () => value, constant: value, subgroup: false };
}

/** Both operands of a binary operator in one type: an abstract literal takes the other's type. */
export function unify(left: Compiled, right: Compiled): [Compiled, Compiled, ValueType] {
  const type =
    typeof left.type === 'object'
      ? left.type
      : typeof right.type === 'object'
        ? right.type
        : concrete(
            left.type === 'float' || right.type === 'float' ? { ...left, type: 'float' } : left,
          );
  return [as(left, type), as(right, type), type];
}

export function literal(text: string): Compiled {
  if (text === 'true' || text === 'false') {
    const value = text === 'true';
    return { type: scalarType('bool'), at: () => value, constant: value, subgroup: false };
  }
  // In hex, f and h are digits, so only i and u are suffixes there.
  const hex = text.startsWith('0x');
  const suffix = (hex ? /[iu]$/ : /[iufh]$/).exec(text)?.[0] ?? '';
  const digits = text.slice(0, text.length - suffix.length);
  const value = hex ? Number.parseInt(digits, 16) : Number(digits);
  const scalars: Record<string, Scalar> = { i: 'i32', u: 'u32', f: 'f32', h: 'f16' };
  const scalar = scalars[suffix];
  if (scalar === undefined) {
    const type = !hex && /[.eE]/.test(digits) ? 'float' : 'int';
    return { type, at: () => value, literal: value, subgroup: false };
  }
  const rounded = wrap(scalar, value);
  return { type: scalarType(scalar), at: () => rounded, constant: rounded, subgroup: false };
}
