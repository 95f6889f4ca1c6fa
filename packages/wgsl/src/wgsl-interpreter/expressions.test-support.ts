import type { Machine, Memory } from './memory.test-support.js';
import { typeText, type ExprNode, type ModuleNode, type TypeNode } from './parse.test-support.js';
import {
  COMPARISONS,
  WgslExecutionError,
  arithmetic,
  convert,
  packHalves,
  reinterpret,
  scalarFunction,
  scalarType,
  typeName,
  unpackHalves,
  wrap,
  type Scalar,
  type Value,
  type ValueType,
} from './values.test-support.js';

// Expressions compile once to closures giving a lane's value (`at(lane)`), typed at compile time as
// WGSL types them (an abstract literal takes its context's type); a subgroup shuffle evaluates its
// operand in the source lane, which lockstep statements (statements.test-support.ts) make sound.

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
  /** Whether a subgroup operation is inside (the statement must mark its active lanes). */
  readonly subgroup: boolean;
}
export type Binding =
  | { kind: 'local'; slot: Value[]; type: ValueType; mutable: boolean }
  | { kind: 'memory'; memory: Memory }
  | { kind: 'value'; type: ValueType; at: At }
  | { kind: 'struct'; members: ReadonlyMap<string, { type: ValueType; value: Value }> };

const SCALARS = new Set<string>(['u32', 'i32', 'f32', 'f16', 'bool']);
const SWIZZLE = 'xyzw';

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
  return { type, at: () => value, subgroup: false };
}

/** Both operands of a binary operator in one type: an abstract literal takes the other's type. */
function unify(left: Compiled, right: Compiled): [Compiled, Compiled, ValueType] {
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
  if (text === 'true' || text === 'false')
    return { type: scalarType('bool'), at: () => text === 'true', subgroup: false };
  const suffix =
    /[iufh]$/.test(text) && !text.startsWith('0x')
      ? text.slice(-1)
      : text.startsWith('0x') && /[iu]$/.test(text)
        ? text.slice(-1)
        : '';
  const digits = suffix === '' ? text : text.slice(0, -1);
  const value = digits.startsWith('0x') ? Number.parseInt(digits, 16) : Number(digits);
  const scalars: Record<string, Scalar> = { i: 'i32', u: 'u32', f: 'f32', h: 'f16' };
  const scalar = scalars[suffix];
  if (scalar === undefined) {
    const type = /[.eE]/.test(digits) && !digits.startsWith('0x') ? 'float' : 'int';
    return { type, at: () => value, literal: value, subgroup: false };
  }
  const rounded = wrap(scalar, value);
  return { type: scalarType(scalar), at: () => rounded, subgroup: false };
}

export class ExpressionCompiler {
  private readonly scopes: Map<string, Binding>[] = [new Map()];

  constructor(
    protected readonly module: ModuleNode,
    protected readonly machine: Machine,
    globals: ReadonlyMap<string, Binding>,
  ) {
    for (const [name, binding] of globals) this.declare(name, binding);
  }

  static globals(
    memories: ReadonlyMap<string, Memory>,
    uniforms: ReadonlyMap<string, ReadonlyMap<string, { type: ValueType; value: Value }>>,
  ): Map<string, Binding> {
    const globals = new Map<string, Binding>();
    for (const [name, memory] of memories) globals.set(name, { kind: 'memory', memory });
    for (const [name, members] of uniforms) globals.set(name, { kind: 'struct', members });
    return globals;
  }

  protected declare(name: string, binding: Binding): void {
    this.scopes.at(-1)?.set(name, binding);
  }

  protected lookup(name: string): Binding {
    for (let index = this.scopes.length - 1; index >= 0; index--) {
      const binding = this.scopes[index]?.get(name);
      if (binding !== undefined) return binding;
    }
    throw new WgslCompileError(`unknown name '${name}'`);
  }

  protected scoped<T>(body: () => T): T {
    this.scopes.push(new Map());
    try {
      return body();
    } finally {
      this.scopes.pop();
    }
  }

  /** The entry point's body as one runner over a workgroup's lanes, with its builtins bound. */
  protected checkType(value: Compiled, type: ValueType, what: string): void {
    const actual = concrete(value);
    if (actual.scalar !== type.scalar || actual.width !== type.width)
      throw new WgslCompileError(`${what} is ${typeName(type)} but is given a ${typeName(actual)}`);
  }

  expression(node: ExprNode): Compiled {
    switch (node.kind) {
      case 'literal':
        return literal(node.text);
      case 'name': {
        const binding = this.lookup(node.name);
        if (binding.kind === 'local') {
          const slot = binding.slot;
          return { type: binding.type, at: (lane) => slot[lane] as Value, subgroup: false };
        }
        if (binding.kind === 'value')
          return { type: binding.type, at: binding.at, subgroup: false };
        throw new WgslCompileError(`'${node.name}' is not a value`);
      }
      case 'unary':
        return this.unary(node.operator, this.expression(node.operand));
      case 'binary':
        return this.binary(node.operator, this.expression(node.left), this.expression(node.right));
      case 'index': {
        if (node.base.kind !== 'name') throw new WgslCompileError('unsupported index base');
        const binding = this.lookup(node.base.name);
        if (binding.kind !== 'memory')
          throw new WgslCompileError(`cannot index '${node.base.name}'`);
        const memory = binding.memory;
        const index = as(this.expression(node.index), scalarType('u32'));
        return {
          type: memory.element,
          at: (lane) => memory.load(index.at(lane) as number, lane),
          subgroup: index.subgroup,
        };
      }
      case 'member':
        return this.member(node.base, node.member);
      case 'call':
        return this.call(node);
    }
  }

  private member(baseNode: ExprNode, member: string): Compiled {
    if (baseNode.kind === 'name') {
      const binding = this.lookup(baseNode.name);
      if (binding.kind === 'struct') {
        const field = binding.members.get(member);
        if (field === undefined)
          throw new WgslCompileError(`no member '${member}' in '${baseNode.name}'`);
        const value = field.value;
        return { type: field.type, at: () => value, subgroup: false };
      }
    }
    const base = this.expression(baseNode);
    const type = concrete(base);
    const component = SWIZZLE.indexOf(member);
    if (member.length !== 1 || component < 0 || component >= type.width)
      throw new WgslCompileError(`no component '.${member}' of a ${typeName(type)}`);
    return {
      type: scalarType(type.scalar),
      at: (lane) => (base.at(lane) as readonly number[])[component] as number,
      subgroup: base.subgroup,
    };
  }

  private unary(operator: string, operand: Compiled): Compiled {
    const type = concrete(operand);
    const { scalar } = type;
    const at = operand.at;
    const subgroup = operand.subgroup;
    if (operand.literal !== undefined && operator === '-')
      return { ...operand, at: () => -(operand.literal ?? 0), literal: -operand.literal };
    if (operator === '!' && scalar === 'bool')
      return { type, at: (lane) => !(at(lane) as boolean), subgroup };
    if (operator === '-' && scalar !== 'bool' && scalar !== 'u32')
      return { type, at: (lane) => wrap(scalar, -(at(lane) as number)), subgroup };
    if (operator === '~' && (scalar === 'u32' || scalar === 'i32'))
      return { type, at: (lane) => wrap(scalar, ~(at(lane) as number)), subgroup };
    throw new WgslCompileError(`unsupported '${operator}' on ${typeName(type)}`);
  }

  private binary(operator: string, leftInput: Compiled, rightInput: Compiled): Compiled {
    const subgroup = leftInput.subgroup || rightInput.subgroup;
    if (operator === '<<' || operator === '>>') {
      const type = concrete(leftInput);
      const left = as(leftInput, type);
      const right = as(rightInput, scalarType('u32'));
      const shift = arithmetic(operator, type.scalar);
      if (shift === undefined || type.width !== 1)
        throw new WgslCompileError(`unsupported ${operator}`);
      return {
        type,
        at: (lane) => shift(left.at(lane) as number, right.at(lane) as number),
        subgroup,
      };
    }
    const [left, right, type] = unify(leftInput, rightInput);
    if (type.width !== 1)
      throw new WgslCompileError(`unsupported '${operator}' on ${typeName(type)}`);
    if (operator === '&&' || operator === '||') {
      const and = operator === '&&';
      return {
        type,
        at: (lane) =>
          and
            ? left.at(lane) === true && right.at(lane) === true
            : left.at(lane) === true || right.at(lane) === true,
        subgroup,
      };
    }
    const comparison = COMPARISONS[operator];
    if (comparison !== undefined)
      return {
        type: scalarType('bool'),
        at: (lane) => comparison(left.at(lane), right.at(lane)),
        subgroup,
      };
    const operation = arithmetic(operator, type.scalar);
    if (operation === undefined || type.scalar === 'bool')
      throw new WgslCompileError(`unsupported '${operator}' on ${typeName(type)}`);
    return {
      type,
      at: (lane) => operation(left.at(lane) as number, right.at(lane) as number),
      subgroup,
    };
  }

  private call(node: Extract<ExprNode, { kind: 'call' }>): Compiled {
    const args = node.args.map((arg) => this.expression(arg));
    const subgroup = args.some((arg) => arg.subgroup);
    const [first, second, third] = args;
    const callee = node.callee;
    if (callee === 'subgroupShuffleXor' && first !== undefined && second !== undefined)
      return this.shuffleXor(first, as(second, scalarType('u32')));
    if (callee === 'bitcast' && node.template !== undefined && first !== undefined) {
      const to = valueType(node.template);
      const from = concrete(first);
      return {
        type: to,
        at: (lane) => {
          const value = first.at(lane);
          return typeof value === 'object'
            ? value.map((component) => reinterpret(component, from.scalar, to.scalar))
            : reinterpret(value as number, from.scalar, to.scalar);
        },
        subgroup,
      };
    }
    if (/^vec[234]$/.test(callee)) {
      const scalar =
        node.template === undefined
          ? concrete(first ?? literal('0')).scalar
          : valueType(node.template).scalar;
      const parts = args.map((arg) => as(arg, scalarType(scalar)));
      return {
        type: { scalar, width: Number(callee.slice(3)) },
        at: (lane) => parts.map((part) => part.at(lane) as number),
        subgroup,
      };
    }
    if (SCALARS.has(callee) && first !== undefined) {
      const to = callee as Scalar;
      const from = concrete(first).scalar;
      return {
        type: scalarType(to),
        at: (lane) => convert(first.at(lane) as number, from, to),
        subgroup,
      };
    }
    if (callee === 'select' && first !== undefined && second !== undefined && third !== undefined) {
      const [no, yes, type] = unify(first, second);
      return {
        type,
        at: (lane) => (third.at(lane) === true ? yes.at(lane) : no.at(lane)),
        subgroup,
      };
    }
    if (callee === 'unpack2x16float' && first !== undefined)
      return {
        type: { scalar: 'f32', width: 2 },
        at: (lane) => unpackHalves(first.at(lane) as number),
        subgroup,
      };
    if (callee === 'pack2x16float' && first !== undefined)
      return {
        type: scalarType('u32'),
        at: (lane) => packHalves(first.at(lane) as number[]),
        subgroup,
      };
    if (callee === 'dot4I8Packed' && first !== undefined && second !== undefined) {
      const dot = scalarFunction(callee, 'u32');
      return {
        type: scalarType('i32'),
        at: (lane) => dot?.(first.at(lane) as number, second.at(lane) as number) ?? 0,
        subgroup,
      };
    }
    const helper = this.helper(callee);
    if (helper !== undefined) {
      return {
        type: helper.type,
        at: (lane) => helper.call(args.map((arg) => arg.at(lane))),
        subgroup,
      };
    }
    const type =
      args.reduce<ValueType | undefined>(
        (found, arg) => found ?? (typeof arg.type === 'object' ? arg.type : undefined),
        undefined,
      ) ?? concrete(first ?? literal('0'));
    const operation = scalarFunction(callee, type.scalar, this.machine.fusedFma);
    if (operation === undefined || type.width !== 1)
      throw new WgslCompileError(`unsupported function ${callee}() on ${typeName(type)}`);
    const typed = args.map((arg) => as(arg, type));
    return {
      type,
      at: (lane) => operation(...typed.map((arg) => arg.at(lane) as number)),
      subgroup,
    };
  }

  /** A module function of one `return`, such as forge_f32_to_u32. */
  private helper(name: string): { type: ValueType; call: (args: Value[]) => Value } | undefined {
    const node = this.module.functions.get(name);
    if (node === undefined || node.workgroupSize !== undefined) return undefined;
    const [statement] = node.body;
    if (node.body.length !== 1 || statement?.kind !== 'return' || node.returnType === undefined)
      throw new WgslCompileError(`${name}: only functions of one return statement are supported`);
    const parameters: Value[] = node.parameters.map(() => 0);
    const body = this.scoped(() => {
      node.parameters.forEach((parameter, index) =>
        this.declare(parameter.name, {
          kind: 'value',
          type: valueType(parameter.type),
          at: () => parameters[index] as Value,
        }),
      );
      return as(this.expression(statement.value), valueType(node.returnType as TypeNode));
    });
    return {
      type: valueType(node.returnType),
      call: (args) => {
        args.forEach((arg, index) => (parameters[index] = arg));
        return body.at(0);
      },
    };
  }

  // The value in the lane whose subgroup invocation id is ours xor `mask`, read in lockstep before
  // any lane of the statement assigns; lanes map to subgroups in local_index order.
  private shuffleXor(value: Compiled, mask: Compiled): Compiled {
    const machine = this.machine;
    const type = concrete(value);
    return {
      type,
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
        return value.at(source);
      },
      subgroup: true,
    };
  }
}
