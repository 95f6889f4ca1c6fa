import { bitcastValue, dot4I8Semantics } from '@forge/ir';
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
    return {
      type: { scalar, width },
      at: (lane) => parts.map((part) => part.at(lane) as number),
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
      at: (lane) => {
        const bits = value.at(lane);
        return typeof bits === 'object'
          ? bits.map((component) => bitcastValue(component, from.scalar, to.scalar))
          : bitcastValue(bits as number, from.scalar, to.scalar);
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
    return {
      type,
      at: (lane) => {
        const [falseValue, trueValue] = [no.at(lane), yes.at(lane)];
        return condition.at(lane) === true ? trueValue : falseValue;
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
      at: (lane) => dot4I8Semantics(a.at(lane) as number, b.at(lane) as number, 0),
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
  const typed = args.map((arg) => as(arg, type));
  return {
    type,
    at: (lane) => operation(...typed.map((arg) => arg.at(lane) as number)),
    subgroup,
  };
}
