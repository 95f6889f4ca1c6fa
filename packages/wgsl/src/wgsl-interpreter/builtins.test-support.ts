import { bitcastValue, dot4I8Semantics } from '@forge/ir';
import { numericCallAt } from './operators.test-support.js';
import type { At } from './types.test-support.js';
import type { Machine } from './memory.test-support.js';
import type { TypeNode } from './parse.test-support.js';
import {
  SCALARS,
  WgslCompileError,
  as,
  concrete,
  literal,
  unify,
  valueType,
  type Compiled,
} from './types.test-support.js';
import {
  WgslExecutionError,
  convert,
  packHalves,
  scalarFunction,
  scalarType,
  typeName,
  unpackHalves,
  type Scalar,
  type ValueType,
} from './values.test-support.js';

// Read once: under vitest an `export *` re-export is a getter, a cost on every call.
const bitcast = bitcastValue;
const dot4I8 = dot4I8Semantics;
// A scalar bitcast through one word seen as each type, as bitcastValue's DataView does.
const word = new ArrayBuffer(4);
const wordU32 = new Uint32Array(word);
const wordI32 = new Int32Array(word);
const wordF32 = new Float32Array(word);

/** bitcast<to>(x) of one scalar, as bitcastValue computes it. */
function scalarBitcast(from: Scalar, to: Scalar, value: At): At {
  const bits = value as (lane: number) => number;
  if (from === 'f32' && to === 'u32')
    return (lane) => {
      wordF32[0] = bits(lane);
      return wordU32[0] ?? 0;
    };
  if (from === 'f32' && to === 'i32')
    return (lane) => {
      wordF32[0] = bits(lane);
      return wordI32[0] ?? 0;
    };
  if (from !== 'f32' && to === 'f32')
    return (lane) => {
      wordU32[0] = bits(lane);
      return wordF32[0] ?? 0;
    };
  return (lane) => bitcast(bits(lane), from, to);
}

/** `operation` of the arguments' lane values, without a spread or array a call. */
function applied(operation: (...args: number[]) => number, args: readonly At[]): At {
  const [first, second, third] = args as readonly ((lane: number) => number)[];
  if (args.length === 1 && first !== undefined) return (lane) => operation(first(lane));
  if (args.length === 2 && first !== undefined && second !== undefined)
    return (lane) => operation(first(lane), second(lane));
  if (args.length === 3 && first !== undefined && second !== undefined && third !== undefined)
    return (lane) => operation(first(lane), second(lane), third(lane));
  return (lane) => operation(...args.map((arg) => arg(lane) as number));
}

// WGSL's builtin functions as the interpreter runs them, by name: the table's keys are the builtins
// it knows; min, max, fma and the other numeric ones fall through to scalarCall.

/** A call's compiled arguments, its template type (`bitcast<T>`, `vec2<T>`) and the run's lanes. */
interface Call {
  readonly name: string;
  readonly args: readonly Compiled[];
  readonly template: TypeNode | undefined;
  readonly machine: Machine;
  readonly subgroup: boolean;
}
type Builtin = (call: Call) => Compiled;

/** The call's arguments, after checking there are `count` of them. */
function take(call: Call, count: number): Compiled[] {
  if (call.args.length !== count)
    throw new WgslCompileError(`${call.name}() takes ${count} arguments, got ${call.args.length}`);
  return [...call.args];
}

function scalarOnly(call: Call, type: ValueType): void {
  if (type.width !== 1) throw new WgslCompileError(`${call.name}() of a ${typeName(type)}`);
}

const conversion =
  (to: Scalar): Builtin =>
  (call) => {
    const [value] = take(call, 1) as [Compiled];
    const from = concrete(value);
    scalarOnly(call, from);
    return {
      type: scalarType(to),
      at: (lane) => convert(value.at(lane) as number, from.scalar, to),
      subgroup: call.subgroup,
    };
  };

const vector =
  (width: number): Builtin =>
  (call) => {
    if (call.args.length !== width) take(call, width);
    const scalar =
      call.template === undefined
        ? concrete(call.args[0] ?? literal('0')).scalar
        : valueType(call.template).scalar;
    const parts = call.args.map((arg) => as(arg, scalarType(scalar)));
    parts.forEach((part) => scalarOnly(call, concrete(part)));
    const [x, y, z, w] = parts.map((part) => part.at as (lane: number) => number);
    return {
      type: { scalar, width },
      at:
        parts.length === 2 && x !== undefined && y !== undefined
          ? (lane) => [x(lane), y(lane)]
          : parts.length === 4 &&
              x !== undefined &&
              y !== undefined &&
              z !== undefined &&
              w !== undefined
            ? (lane) => [x(lane), y(lane), z(lane), w(lane)]
            : (lane) => parts.map((part) => part.at(lane) as number),
      subgroup: call.subgroup,
    };
  };

// The value in the lane whose subgroup invocation id is ours xor `mask`, read in lockstep before
// any lane of the statement assigns; lanes map to subgroups in local_index order.
const subgroupShuffleXor: Builtin = (call) => {
  const [value, maskInput] = take(call, 2) as [Compiled, Compiled];
  const mask = as(maskInput, scalarType('u32'));
  const machine = call.machine;
  return {
    type: concrete(value),
    at: (lane) => {
      const size = machine.subgroupSize;
      const offset = mask.at(lane) as number;
      if (offset >= size)
        throw new WgslExecutionError(
          `subgroupShuffleXor mask ${offset} is not below the subgroup size ${size}`,
        );
      if (machine.subgroupActive[lane] !== 1)
        throw new WgslExecutionError(
          `subgroupShuffleXor in invocation ${lane} while part of its subgroup of ${size} is inactive (non-uniform control flow)`,
        );
      const source = lane - (lane % size) + ((lane % size) ^ offset);
      if (source >= machine.workgroupSize || machine.active[source] !== 1)
        throw new WgslExecutionError(
          `subgroupShuffleXor in invocation ${lane} reads invocation ${source}, which is not running`,
        );
      machine.shuffles += 1;
      return value.at(source);
    },
    subgroup: true,
  };
};

const BUILTINS: Readonly<Record<string, Builtin>> = {
  bitcast: (call) => {
    const [value] = take(call, 1) as [Compiled];
    if (call.template === undefined) throw new WgslCompileError('bitcast needs a type');
    const to = valueType(call.template);
    const from = concrete(value);
    if (
      to.width !== from.width ||
      [to.scalar, from.scalar].some((s) => s === 'f16' || s === 'bool')
    )
      throw new WgslCompileError(`bitcast from ${typeName(from)} to ${typeName(to)}`);
    return {
      type: to,
      at:
        from.width === 1
          ? scalarBitcast(from.scalar, to.scalar, value.at)
          : (lane) => {
              const bits = value.at(lane);
              return typeof bits === 'object'
                ? bits.map((component) => bitcast(component, from.scalar, to.scalar))
                : bitcast(bits as number, from.scalar, to.scalar);
            },
      subgroup: call.subgroup,
    };
  },
  vec2: vector(2),
  vec3: vector(3),
  vec4: vector(4),
  u32: conversion('u32'),
  i32: conversion('i32'),
  f32: conversion('f32'),
  f16: conversion('f16'),
  bool: conversion('bool'),
  // WGSL evaluates all three operands, so a fault in the one not chosen is still a fault.
  select: (call) => {
    const [no, yes, type] = unify(...(take(call, 3).slice(0, 2) as [Compiled, Compiled]));
    const condition = call.args[2] as Compiled;
    if (concrete(condition).width !== 1)
      throw new WgslCompileError('select() with a vector condition');
    const [noAt, yesAt, conditionAt] = [no.at, yes.at, condition.at];
    return {
      type,
      at: (lane) => {
        const falseValue = noAt(lane);
        const trueValue = yesAt(lane);
        return conditionAt(lane) === true ? trueValue : falseValue;
      },
      subgroup: call.subgroup,
    };
  },
  unpack2x16float: (call) => {
    const [word] = take(call, 1) as [Compiled];
    return {
      type: { scalar: 'f32', width: 2 },
      at: (lane) => unpackHalves(word.at(lane) as number),
      subgroup: call.subgroup,
    };
  },
  pack2x16float: (call) => {
    const [pair] = take(call, 1) as [Compiled];
    return {
      type: scalarType('u32'),
      at: (lane) => packHalves(pair.at(lane) as number[]),
      subgroup: call.subgroup,
    };
  },
  dot4I8Packed: (call) => {
    const [a, b] = take(call, 2).map((arg) => as(arg, scalarType('u32'))) as [Compiled, Compiled];
    return {
      type: scalarType('i32'),
      at: (lane) => dot4I8(a.at(lane) as number, b.at(lane) as number, 0),
      subgroup: call.subgroup,
    };
  },
  subgroupShuffleXor,
};

/** The builtin `name` applied to `args`, or undefined when `name` is not a builtin function. */
export function builtinCall(
  name: string,
  args: readonly Compiled[],
  template: TypeNode | undefined,
  machine: Machine,
): Compiled | undefined {
  const subgroup = args.some((arg) => arg.subgroup);
  const call: Call = { name, args, template, machine, subgroup };
  const builtin = BUILTINS[name];
  if (builtin !== undefined) return builtin(call);
  if (SCALARS.has(name) || args.length === 0) return undefined;
  // min, max, abs, fma, sqrt, …: every argument in the type of the first concrete one.
  const type =
    args.reduce<ValueType | undefined>(
      (found, arg) => found ?? (typeof arg.type === 'object' ? arg.type : undefined),
      undefined,
    ) ?? concrete(args[0] as Compiled);
  const operation = scalarFunction(name, type.scalar, machine.fusedFma);
  if (operation === undefined) return undefined;
  scalarOnly(call, type);
  const typed = args.map((arg) => as(arg, type).at);
  const fused = numericCallAt(name, type.scalar, machine.fusedFma, typed);
  return { type, at: fused ?? applied(operation, typed), subgroup };
}
