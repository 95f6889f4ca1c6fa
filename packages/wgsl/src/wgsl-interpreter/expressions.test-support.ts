import { builtinCall } from './builtins.test-support.js';
import type { Machine, Memory } from './memory.test-support.js';
import type { ExprNode, ModuleNode } from './parse.test-support.js';
import {
  WgslCompileError,
  as,
  concrete,
  literal,
  unify,
  valueType,
  type At,
  type Compiled,
} from './types.test-support.js';
import { arithmeticAt, comparisonAt, negateAt } from './operators.test-support.js';
import { scalarType, typeName, type Value, type ValueType } from './values.test-support.js';

// Expressions compile once to closures giving a lane's value (`at(lane)`), typed at compile time as
// WGSL types them (an abstract literal takes its context's type); a subgroup shuffle evaluates its
// operand in the source lane, which lockstep statements (statements.test-support.ts) make sound.

export type Binding =
  | { kind: 'local'; slot: Value[]; type: ValueType; mutable: boolean }
  | { kind: 'memory'; memory: Memory }
  | { kind: 'value'; type: ValueType; at: At }
  | { kind: 'struct'; members: ReadonlyMap<string, { type: ValueType; value: Value }> };

const SWIZZLE = 'xyzw';

/** The operand's value in every lane, where it is a number known when compiling. */
const numeric = (compiled: Compiled): number | undefined =>
  typeof compiled.constant === 'number' ? compiled.constant : undefined;

interface Helper {
  readonly type: ValueType;
  readonly parameters: Value[];
  readonly body: At;
}

/** A call of `helper`: every argument evaluated (into locals, so nested calls are safe), then the body. */
function helperCall(args: readonly At[], { parameters, body }: Helper): At {
  const [first, second, third] = args;
  if (args.length === 1 && first !== undefined)
    return (lane) => {
      parameters[0] = first(lane);
      return body(lane);
    };
  if (args.length === 2 && first !== undefined && second !== undefined)
    return (lane) => {
      const value = first(lane);
      parameters[1] = second(lane);
      parameters[0] = value;
      return body(lane);
    };
  if (args.length === 3 && first !== undefined && second !== undefined && third !== undefined)
    return (lane) => {
      const value = first(lane);
      const next = second(lane);
      parameters[2] = third(lane);
      parameters[1] = next;
      parameters[0] = value;
      return body(lane);
    };
  return (lane) => {
    const values = args.map((arg) => arg(lane));
    values.forEach((value, index) => (parameters[index] = value));
    return body(lane);
  };
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

  /** Throws unless `value` has exactly `type`. */
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
        const index = as(this.expression(node.index), scalarType('u32'));
        return {
          type: binding.memory.element,
          at: binding.memory.loader(index.at as (lane: number) => number),
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
        return { type: field.type, at: () => value, constant: value, subgroup: false };
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
      return { type, at: negateAt(scalar, at), subgroup };
    if (operator === '~' && (scalar === 'u32' || scalar === 'i32')) {
      const bits = at as (lane: number) => number;
      return {
        type,
        at: scalar === 'u32' ? (lane) => ~bits(lane) >>> 0 : (lane) => ~bits(lane),
        subgroup,
      };
    }
    throw new WgslCompileError(`unsupported '${operator}' on ${typeName(type)}`);
  }

  private binary(operator: string, leftInput: Compiled, rightInput: Compiled): Compiled {
    const subgroup = leftInput.subgroup || rightInput.subgroup;
    if (operator === '<<' || operator === '>>') {
      const type = concrete(leftInput);
      const left = as(leftInput, type);
      const right = as(rightInput, scalarType('u32'));
      const shift = arithmeticAt(operator, type.scalar, left.at, right.at, numeric(right));
      if (shift === undefined || type.width !== 1)
        throw new WgslCompileError(`unsupported ${operator}`);
      return { type, at: shift, subgroup };
    }
    const [left, right, type] = unify(leftInput, rightInput);
    if (type.width !== 1)
      throw new WgslCompileError(`unsupported '${operator}' on ${typeName(type)}`);
    const [leftAt, rightAt] = [left.at, right.at];
    if (operator === '&&' || operator === '||') {
      return {
        type,
        at:
          operator === '&&'
            ? (lane) => leftAt(lane) === true && rightAt(lane) === true
            : (lane) => leftAt(lane) === true || rightAt(lane) === true,
        subgroup,
      };
    }
    const comparison = comparisonAt(operator, leftAt, rightAt);
    if (comparison !== undefined) return { type: scalarType('bool'), at: comparison, subgroup };
    const operation =
      type.scalar === 'bool'
        ? undefined
        : arithmeticAt(operator, type.scalar, leftAt, rightAt, numeric(right));
    if (operation === undefined)
      throw new WgslCompileError(`unsupported '${operator}' on ${typeName(type)}`);
    return { type, at: operation, subgroup };
  }

  private call(node: Extract<ExprNode, { kind: 'call' }>): Compiled {
    const args = node.args.map((arg) => this.expression(arg));
    const builtin = builtinCall(node.callee, args, node.template, this.machine);
    if (builtin !== undefined) return builtin;
    const helper = this.helper(node.callee);
    if (helper === undefined) throw new WgslCompileError(`unsupported function ${node.callee}()`);
    return {
      type: helper.type,
      at: helperCall(
        args.map((arg) => arg.at),
        helper,
      ),
      subgroup: args.some((arg) => arg.subgroup),
    };
  }

  /** A module function of one `return`, such as the backend's forge_f32_to_u32. */
  private helper(name: string): Helper | undefined {
    const node = this.module.functions.get(name);
    if (node === undefined || node.workgroupSize !== undefined) return undefined;
    const [statement] = node.body;
    if (node.body.length !== 1 || statement?.kind !== 'return' || node.returnType === undefined)
      throw new WgslCompileError(`${name}: only functions of one return statement are supported`);
    const parameters: Value[] = node.parameters.map(() => 0);
    const returnType = valueType(node.returnType);
    const body = this.scoped(() => {
      node.parameters.forEach((parameter, index) =>
        this.declare(parameter.name, {
          kind: 'value',
          type: valueType(parameter.type),
          at: () => parameters[index] as Value,
        }),
      );
      return as(this.expression(statement.value), returnType);
    });
    this.checkType(body, returnType, `${name}'s result`);
    return { type: returnType, parameters, body: body.at };
  }
}
