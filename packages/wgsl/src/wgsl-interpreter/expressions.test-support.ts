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
import {
  COMPARISONS,
  arithmetic,
  scalarType,
  typeName,
  wrap,
  type Value,
  type ValueType,
} from './values.test-support.js';

// Expressions compile once to closures giving a lane's value (`at(lane)`), typed at compile time as
// WGSL types them (an abstract literal takes its context's type); a subgroup shuffle evaluates its
// operand in the source lane, which lockstep statements (statements.test-support.ts) make sound.

export type Binding =
  | { kind: 'local'; slot: Value[]; type: ValueType; mutable: boolean }
  | { kind: 'memory'; memory: Memory }
  | { kind: 'value'; type: ValueType; at: At }
  | { kind: 'struct'; members: ReadonlyMap<string, { type: ValueType; value: Value }> };

const SWIZZLE = 'xyzw';

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
    const builtin = builtinCall(node.callee, args, node.template, this.machine);
    if (builtin !== undefined) return builtin;
    const helper = this.helper(node.callee);
    if (helper === undefined) throw new WgslCompileError(`unsupported function ${node.callee}()`);
    return {
      type: helper.type,
      at: (lane) =>
        helper.call(
          args.map((arg) => arg.at(lane)),
          lane,
        ),
      subgroup: args.some((arg) => arg.subgroup),
    };
  }

  /** A module function of one `return`, such as the backend's forge_f32_to_u32. */
  private helper(
    name: string,
  ): { type: ValueType; call: (args: Value[], lane: number) => Value } | undefined {
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
    return {
      type: returnType,
      // Arguments are all evaluated before the parameters are set, so nested calls are safe.
      call: (args, lane) => {
        args.forEach((arg, index) => (parameters[index] = arg));
        return body.at(lane);
      },
    };
  }
}
