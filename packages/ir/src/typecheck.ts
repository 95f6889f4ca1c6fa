import {
  AXES,
  AXIS_BUILTINS,
  BUILTIN_NAMES,
  MMA_FRAGMENTS,
  MMA_SHAPES,
  REDUCTIONS,
  SHUFFLE_MODES,
  VECTOR_WIDTHS,
  type ExprOp,
  type UnaryOp,
} from './body.js';
import {
  BINARY_OPERANDS,
  EXPR_OPS,
  STMT_OPS,
  UNARY_OPERANDS,
  WORD_OPS,
  isWordOp,
  assertNever,
  isBinaryOp,
  isExprOp,
  isStmtOp,
  isUnaryOp,
} from './ops.js';
import {
  IssueCollector,
  describeJson,
  isRecord,
  joinPath,
  ownField,
  type JsonRecord,
} from './json-shape.js';
import { identifierProblem } from './identifiers.js';
import type { BufferAccess } from './spec.js';
import { checkUniformity } from './uniformity.js';
import { SCALAR_TYPES, isFloatType, isIntegerType, isOneOf, type ScalarType } from './types.js';

/** What the type checker knows of the declarations around a body. */
export interface BodyContext {
  readonly params: ReadonlyMap<string, ScalarType>;
  readonly knobs: ReadonlySet<string>;
  readonly buffers: ReadonlyMap<string, { element: ScalarType; access: BufferAccess }>;
  readonly shared: ReadonlyMap<string, ScalarType>;
  /** Names already taken by declarations; locals may not reuse them. */
  readonly reserved: ReadonlySet<string>;
}

interface Local {
  readonly type: ScalarType;
  readonly mutable: boolean;
}

// Tint stops at 62 nested if/for (statement depth 127, two per level) and its parser at 128
// levels of expression and block nesting together, where a prefix `-x`/`~x`/`!x` takes two.
// Forge keeps a margin: 50 nested blocks, and a nesting cost of 100 for any expression.
const MAX_BLOCK_DEPTH = 50;
const MAX_NESTING = 100;
// One statement's expression: the catalog's largest has 380 values. A shared sub-expression
// counts at each use, as emitted; a 14-level `max(e, e)` chain (131,068) is 1.2 MB of PTX that
// Dawn takes minutes to turn into a pipeline.
export const MAX_EXPRESSION_VALUES = 16_384;
const PREFIX_UNARY: readonly UnaryOp[] = ['neg', 'not'];
const I32_MIN = -(2 ** 31);
const F16_MAX = 65504;

/**
 * Returns the paths of warp operations in warp-uniform (not workgroup-uniform) control flow.
 * Type-checks a body and checks that barriers sit in workgroup-uniform control flow and warp
 * operations in warp-uniform control flow. Reports into `issues`; never throws on malformed JSON.
 */
export function checkBody(
  body: unknown,
  path: string,
  context: BodyContext,
  issues: IssueCollector,
): string[] {
  new BodyChecker(context, issues).block(body, path, new Map(), 0);
  if (issues.issues.length > 0) return [];
  return checkUniformity(body as readonly JsonRecord[], path, context, issues);
}

class BodyChecker {
  private readonly declared = new Set<string>();

  constructor(
    private readonly context: BodyContext,
    private readonly issues: IssueCollector,
  ) {}

  block(value: unknown, path: string, outer: ReadonlyMap<string, Local>, depth: number): void {
    const statements = this.issues.array(value, path);
    if (statements === undefined) return;
    if (depth > MAX_BLOCK_DEPTH)
      return this.issues.add(path, `nested deeper than ${MAX_BLOCK_DEPTH} if/for levels`);
    const scope = new Map(outer);
    statements.forEach((statement, index) =>
      this.statement(statement, joinPath(path, index), scope, depth),
    );
  }

  private declare(
    name: unknown,
    path: string,
    scope: Map<string, Local>,
    type: ScalarType,
    mutable: boolean,
  ): void {
    const problem = identifierProblem(name);
    if (problem !== undefined) return this.issues.add(path, problem);
    const text = name as string;
    if (this.context.reserved.has(text))
      return this.issues.add(
        path,
        `'${text}' is already a buffer, param, shared array or schedule knob`,
      );
    if (this.declared.has(text))
      return this.issues.add(
        path,
        `'${text}' is declared twice (local names are unique in a body)`,
      );
    this.declared.add(text);
    scope.set(text, { type, mutable });
  }

  private statement(value: unknown, path: string, scope: Map<string, Local>, depth: number): void {
    const op = isRecord(value) ? ownField(value, 'op') : undefined;
    if (!isStmtOp(op)) {
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        return this.issues.add(
          joinPath(path, 'op'),
          `unknown statement op ${describeJson(op)} (known: ${Object.keys(STMT_OPS).join(', ')})`,
        );
      }
      return this.issues.add(path, `must be a statement object, got ${describeJson(value)}`);
    }
    const node = this.issues.record(value, path, STMT_OPS[op].fields);
    if (node === undefined) return;
    switch (op) {
      case 'let': {
        const type = this.issues.oneOf(node['type'], joinPath(path, 'type'), SCALAR_TYPES);
        this.expect(depth, node['value'], joinPath(path, 'value'), scope, type);
        if (type !== undefined)
          this.declare(node['name'], joinPath(path, 'name'), scope, type, true);
        return;
      }
      case 'assign': {
        const name = node['name'];
        const local = typeof name === 'string' ? scope.get(name) : undefined;
        if (local === undefined)
          this.issues.add(joinPath(path, 'name'), `${describeJson(name)} is not a local in scope`);
        else if (!local.mutable)
          this.issues.add(
            joinPath(path, 'name'),
            `'${String(name)}' cannot be assigned (loop index or warp-op result)`,
          );
        this.expect(depth, node['value'], joinPath(path, 'value'), scope, local?.type);
        return;
      }
      case 'store': {
        const target = this.writableMemory(node['memory'], joinPath(path, 'memory'));
        this.expect(depth, node['index'], joinPath(path, 'index'), scope, 'u32');
        this.expect(depth, node['value'], joinPath(path, 'value'), scope, target?.element);
        return;
      }
      case 'store_vector': {
        const target = this.writableMemory(node['memory'], joinPath(path, 'memory'));
        this.expect(depth, node['index'], joinPath(path, 'index'), scope, 'u32');
        const values = node['values'];
        if (!Array.isArray(values) || !(VECTOR_WIDTHS as readonly number[]).includes(values.length))
          return this.issues.add(
            joinPath(path, 'values'),
            `must be an array of ${VECTOR_WIDTHS.join(' or ')} values, got ${describeJson(values)}`,
          );
        values.forEach((value: unknown, index) =>
          this.expect(
            depth,
            value,
            joinPath(joinPath(path, 'values'), index),
            scope,
            target?.element,
          ),
        );
        return;
      }
      case 'load_vector': {
        const target = this.memory(node['memory'], joinPath(path, 'memory'));
        const type = this.issues.oneOf(node['type'], joinPath(path, 'type'), SCALAR_TYPES);
        if (type !== undefined && target !== undefined && type !== target.element)
          this.issues.add(
            joinPath(path, 'type'),
            `is ${type} but '${String(node['memory'])}' holds ${target.element}`,
          );
        this.expect(depth, node['index'], joinPath(path, 'index'), scope, 'u32');
        const names = node['names'];
        if (!Array.isArray(names) || !(VECTOR_WIDTHS as readonly number[]).includes(names.length))
          return this.issues.add(
            joinPath(path, 'names'),
            `must be an array of ${VECTOR_WIDTHS.join(' or ')} local names, got ${describeJson(names)}`,
          );
        if (type !== undefined)
          names.forEach((name: unknown, index) =>
            this.declare(name, joinPath(joinPath(path, 'names'), index), scope, type, false),
          );
        return;
      }
      case 'if':
        this.expect(depth, node['condition'], joinPath(path, 'condition'), scope, 'bool');
        this.block(node['then'], joinPath(path, 'then'), scope, depth + 1);
        this.block(node['else'], joinPath(path, 'else'), scope, depth + 1);
        return;
      case 'for': {
        const type = this.issues.oneOf(node['type'], joinPath(path, 'type'), [
          'u32',
          'i32',
        ] as const);
        for (const key of ['start', 'end', 'step'])
          this.expect(depth, node[key], joinPath(path, key), scope, type);
        const step = node['step'] as JsonRecord | undefined;
        if (step?.['op'] === 'const' && typeof step['value'] === 'number' && step['value'] <= 0) {
          this.issues.add(joinPath(path, 'step'), 'must be positive');
        }
        const inner = new Map(scope);
        if (type !== undefined)
          this.declare(node['name'], joinPath(path, 'name'), inner, type, false);
        this.block(node['body'], joinPath(path, 'body'), inner, depth + 1);
        return;
      }
      case 'barrier':
        return;
      case 'shuffle':
      case 'reduce': {
        const allowedTypes =
          op === 'shuffle' ? (['f32', 'i32', 'u32'] as const) : (['f32', 'i32', 'u32'] as const);
        if (op === 'shuffle') {
          this.issues.oneOf(node['mode'], joinPath(path, 'mode'), SHUFFLE_MODES);
          this.expect(depth, node['lane'], joinPath(path, 'lane'), scope, 'u32');
        } else this.issues.oneOf(node['reduction'], joinPath(path, 'reduction'), REDUCTIONS);
        const type = this.issues.oneOf(node['type'], joinPath(path, 'type'), allowedTypes);
        this.expect(depth, node['value'], joinPath(path, 'value'), scope, type);
        if (type !== undefined)
          this.declare(node['name'], joinPath(path, 'name'), scope, type, false);
        return;
      }
      case 'mma': {
        const shape = this.issues.oneOf(node['shape'], joinPath(path, 'shape'), MMA_SHAPES);
        if (shape === undefined) return;
        const counts = MMA_FRAGMENTS[shape];
        const types = { a: 'u32', b: 'u32', c: 'f32' } as const;
        for (const key of ['a', 'b', 'c'] as const) {
          const values = node[key];
          const at = joinPath(path, key);
          if (!Array.isArray(values) || values.length !== counts[key]) {
            this.issues.add(
              at,
              `must be an array of ${counts[key]} ${types[key]} values for ${shape}, got ${describeJson(values)}`,
            );
            continue;
          }
          values.forEach((value: unknown, index) =>
            this.expect(depth, value, joinPath(at, index), scope, types[key]),
          );
        }
        const names = node['names'];
        if (!Array.isArray(names) || names.length !== counts.c)
          return this.issues.add(
            joinPath(path, 'names'),
            `must be an array of ${counts.c} local names for ${shape}, got ${describeJson(names)}`,
          );
        names.forEach((name: unknown, index) =>
          this.declare(name, joinPath(joinPath(path, 'names'), index), scope, 'f32', false),
        );
        return;
      }
      default:
        return assertNever(op, 'statement op');
    }
  }

  /** The memory a store writes; a `read` or `uniform` buffer is an issue at `path`. */
  private writableMemory(
    name: unknown,
    path: string,
  ): { element: ScalarType; access?: BufferAccess } | undefined {
    const target = this.memory(name, path);
    if (target?.access === 'read' || target?.access === 'uniform')
      this.issues.add(path, `buffer '${String(name)}' is ${target.access}-only`);
    return target;
  }

  private memory(
    name: unknown,
    path: string,
  ): { element: ScalarType; access?: BufferAccess } | undefined {
    if (typeof name === 'string') {
      const found = this.context.buffers.get(name);
      if (found !== undefined) return found;
      const element = this.context.shared.get(name);
      if (element !== undefined) return { element };
    }
    this.issues.add(path, `${describeJson(name)} is not a declared buffer or shared array`);
    return undefined;
  }

  /** Checks an expression and that its type is `expected` (when known). */
  private expect(
    blockDepth: number,
    value: unknown,
    path: string,
    scope: ReadonlyMap<string, Local>,
    expected: ScalarType | undefined,
  ): void {
    if (valuesPast(value, MAX_EXPRESSION_VALUES)) {
      this.issues.add(
        path,
        `has more than ${MAX_EXPRESSION_VALUES} values (each use of a shared sub-expression counts); split it with let`,
      );
      return;
    }
    const type = this.expression(value, path, scope, blockDepth);
    if (type !== undefined && expected !== undefined && type !== expected) {
      this.issues.add(path, `has type ${type} but ${expected} is required`);
    }
  }

  /** Returns the expression's type, or undefined after reporting a problem. */
  private expression(
    value: unknown,
    path: string,
    scope: ReadonlyMap<string, Local>,
    depth: number,
  ): ScalarType | undefined {
    if (depth > MAX_NESTING) {
      this.issues.add(
        path,
        `nests deeper than ${MAX_NESTING} (each enclosing if/for and expression level counts 1, neg/not 2)`,
      );
      return undefined;
    }
    const op = isRecord(value) ? ownField(value, 'op') : undefined;
    if (!isExprOp(op)) {
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        this.issues.add(joinPath(path, 'op'), `unknown expression op ${describeJson(op)}`);
      } else this.issues.add(path, `must be an expression object, got ${describeJson(value)}`);
      return undefined;
    }
    const node = this.issues.record(value, path, EXPR_OPS[op].fields);
    if (node === undefined) return undefined;
    const declaredType = this.issues.oneOf(node['type'], joinPath(path, 'type'), SCALAR_TYPES);
    const inferred = this.infer(node, op, path, scope, depth);
    if (inferred === undefined || declaredType === undefined) return undefined;
    if (inferred !== declaredType) {
      this.issues.add(
        joinPath(path, 'type'),
        `is ${declaredType} but the expression has type ${inferred}`,
      );
      return undefined;
    }
    return inferred;
  }

  private args(
    node: JsonRecord,
    path: string,
    count: number,
    scope: ReadonlyMap<string, Local>,
    depth: number,
  ): (ScalarType | undefined)[] | undefined {
    const args = this.issues.array(node['args'], joinPath(path, 'args'));
    if (args === undefined) return undefined;
    if (args.length !== count) {
      this.issues.add(joinPath(path, 'args'), `must have ${count} argument(s), got ${args.length}`);
      return undefined;
    }
    return args.map((arg, index) =>
      this.expression(arg, joinPath(joinPath(path, 'args'), index), scope, depth + 1),
    );
  }

  private infer(
    node: JsonRecord,
    op: ExprOp,
    path: string,
    scope: ReadonlyMap<string, Local>,
    depth: number,
  ): ScalarType | undefined {
    const type = node['type'] as ScalarType;
    const fail = (message: string, at = path): undefined => {
      this.issues.add(at, message);
      return undefined;
    };
    switch (op) {
      case 'const':
        return this.constant(node, path);
      case 'var': {
        const local = typeof node['name'] === 'string' ? scope.get(node['name']) : undefined;
        return (
          local?.type ??
          fail(`${describeJson(node['name'])} is not a local in scope`, joinPath(path, 'name'))
        );
      }
      case 'param': {
        const param =
          typeof node['name'] === 'string' ? this.context.params.get(node['name']) : undefined;
        return (
          param ??
          fail(`${describeJson(node['name'])} is not a declared param`, joinPath(path, 'name'))
        );
      }
      case 'schedule':
        return typeof node['name'] === 'string' && this.context.knobs.has(node['name'])
          ? 'u32'
          : fail(`${describeJson(node['name'])} is not a schedule knob`, joinPath(path, 'name'));
      case 'builtin': {
        const name = this.issues.oneOf(node['name'], joinPath(path, 'name'), BUILTIN_NAMES);
        if (name === undefined) return undefined;
        if (AXIS_BUILTINS.includes(name)) {
          if (this.issues.oneOf(node['axis'], joinPath(path, 'axis'), AXES) === undefined)
            return undefined;
        } else if (node['axis'] !== undefined)
          return fail(`builtin '${name}' takes no axis`, joinPath(path, 'axis'));
        return 'u32';
      }
      case 'load': {
        const target = this.memory(node['memory'], joinPath(path, 'memory'));
        const [index] = this.args(node, path, EXPR_OPS[op].arity, scope, depth) ?? [];
        if (index !== undefined && index !== 'u32')
          return fail(
            `index has type ${index} but u32 is required`,
            joinPath(joinPath(path, 'args'), 0),
          );
        return target?.element;
      }
      case 'unpack_half': {
        const half = node['half'];
        const halfOk = half === 0 || half === 1;
        if (!halfOk) fail(`must be 0 or 1, got ${describeJson(half)}`, joinPath(path, 'half'));
        const [word] = this.args(node, path, EXPR_OPS[op].arity, scope, depth) ?? [];
        if (word !== undefined && word !== 'u32')
          return fail(
            `word has type ${word} but u32 is required`,
            joinPath(joinPath(path, 'args'), 0),
          );
        return halfOk && word !== undefined ? 'f32' : undefined;
      }
      case 'pack_half': {
        const args = this.args(node, path, EXPR_OPS[op].arity, scope, depth);
        if (args === undefined || args.includes(undefined)) return undefined;
        const wrong = args.findIndex((arg) => arg !== 'f32');
        if (wrong === -1) return 'u32';
        const at = joinPath(joinPath(path, 'args'), wrong);
        return fail(`pack_half operand has type ${args[wrong]} but f32 is required`, at);
      }
      case 'fma':
      case 'select': {
        const args = this.args(node, path, EXPR_OPS[op].arity, scope, depth);
        if (args === undefined || args.includes(undefined)) return undefined;
        const [a, b, c] = args as ScalarType[];
        if (op === 'select') {
          if (a !== 'bool') return fail(`condition has type ${a} but bool is required`);
          return b === c ? b : fail(`branches have types ${b} and ${c}`);
        }
        if (!isFloatType(a!) || a !== b || a !== c)
          return fail(`fma needs three operands of one float type, got ${args.join(', ')}`);
        return a;
      }
      case 'convert':
      case 'bitcast': {
        const [source] = this.args(node, path, EXPR_OPS[op].arity, scope, depth) ?? [];
        if (source === undefined) return undefined;
        if (op === 'convert') {
          if (source === 'bool' || type === 'bool')
            return fail('convert takes and gives numeric types (use select for bool)');
        } else if (source === 'bool' || source === 'f16' || type === 'bool' || type === 'f16') {
          return fail('bitcast is between 32-bit types (f32, i32, u32)');
        }
        return type;
      }
    }
    if (isWordOp(op)) {
      const args = this.args(node, path, EXPR_OPS[op].arity, scope, depth);
      if (args === undefined || args.includes(undefined)) return undefined;
      const { operands: wanted, result } = WORD_OPS[op];
      const wrong = args.findIndex((arg, index) => arg !== wanted[index]);
      if (wrong === -1) return result;
      const at = joinPath(joinPath(path, 'args'), wrong);
      return fail(`${op} operand has type ${args[wrong]} but ${wanted[wrong]} is required`, at);
    }
    if (isUnaryOp(op)) {
      const cost = PREFIX_UNARY.includes(op) ? depth + 1 : depth;
      const [operand] = this.args(node, path, EXPR_OPS[op].arity, scope, cost) ?? [];
      if (operand === undefined) return undefined;
      const takes = UNARY_OPERANDS[op];
      const ok =
        takes === 'integer_or_bool' ? operand === 'bool' || isIntegerType(operand)
        : takes === 'signed' ? isFloatType(operand) || operand === 'i32'
        : isFloatType(operand); // prettier-ignore
      return ok ? operand : fail(`'${op}' does not take ${operand}`);
    }
    if (!isBinaryOp(op)) return assertNever(op, 'expression op');
    const binaryOp = op;
    const args = this.args(node, path, EXPR_OPS[op].arity, scope, depth);
    if (args === undefined || args.includes(undefined)) return undefined;
    const [left, right] = args as [ScalarType, ScalarType];
    const takes = BINARY_OPERANDS[binaryOp];
    if (takes === 'shift') {
      if (!isIntegerType(left) || right !== 'u32')
        return fail(`'${binaryOp}' needs an integer and a u32 shift, got ${left}, ${right}`);
      return left;
    }
    if (left !== right) return fail(`operands of '${binaryOp}' have types ${left} and ${right}`);
    if (takes === 'comparison') {
      if (left === 'bool' && binaryOp !== 'eq' && binaryOp !== 'ne')
        return fail(`'${binaryOp}' does not take bool`);
      return 'bool';
    }
    const ok =
      takes === 'bitwise' ? left === 'bool' || isIntegerType(left)
      : takes === 'integer' ? isIntegerType(left)
      : left !== 'bool'; // prettier-ignore
    return ok ? left : fail(`'${binaryOp}' does not take ${left}`);
  }

  private constant(node: JsonRecord, path: string): ScalarType | undefined {
    const type = node['type'];
    const value = node['value'];
    const at = joinPath(path, 'value');
    const fail = (message: string): undefined => {
      this.issues.add(at, message);
      return undefined;
    };
    if (!isOneOf(SCALAR_TYPES, type)) return undefined;
    if (type === 'bool')
      return typeof value === 'boolean'
        ? type
        : fail(`bool constant must be true or false, got ${describeJson(value)}`);
    if (typeof value !== 'number' || !Number.isFinite(value))
      return fail(`must be a finite number, got ${describeJson(value)}`);
    if (type === 'u32' && !(Number.isInteger(value) && value >= 0 && value <= 0xffffffff))
      return fail(`${value} is not a u32`);
    if (type === 'i32' && !(Number.isInteger(value) && value >= I32_MIN && value < 2 ** 31))
      return fail(`${value} is not an i32`);
    if (type === 'f16' && Math.abs(value) > F16_MAX)
      return fail(`${value} is outside the f16 range`);
    if (type === 'f32' && Math.abs(Math.fround(value)) === Infinity)
      return fail(`${value} is outside the f32 range`);
    return type;
  }
}

/** Whether `value` holds more than `limit` JSON values; stops counting once past it. */
function valuesPast(value: unknown, limit: number): boolean {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (++count > limit) return true;
    if (next !== null && typeof next === 'object') pending.push(...Object.values(next));
  }
  return false;
}
