import {
  InternalError,
  assertNever,
  isBinaryExpr,
  isUnaryExpr,
  isWordExpr,
  printStatementHeader,
  type Expr,
  type KernelSpec,
  type ScalarType,
  type Stmt,
} from '@forge/ir';
import {
  BINARY_TEMPLATES,
  FMA_TEMPLATE,
  SELECT_TEMPLATE,
  UNARY_TEMPLATES,
  WORD_LOWERINGS,
} from './ops/arithmetic.js';
import {
  bitcastText,
  convertText,
  packHalfText,
  saturatingConversion,
  unpackHalfText,
} from './ops/conversion.js';
import { wgslLiteral, wgslType } from './ops/types.js';
import { mmaLines } from './ops/mma.js';
import { LANE, reduceLines, shuffleLines, shuffleSourceLane } from './ops/warp.js';

// Every spec name gets a prefix per kind, and generated names start with `forge_`: no collisions.
export const bufferName = (name: string): string => `buf_${name}`;
export const sharedName = (name: string): string => `wg_${name}`;
export const localName = (name: string): string => `v_${name}`;
export const PARAMS_VARIABLE = 'forge_params';
export const PARAMS_STRUCT = 'ForgeParams';

const BUILTINS = {
  local_id: () => 'local_index',
  workgroup_id: (axis: string) => `workgroup_id.${axis}`,
  num_workgroups: (axis: string) => `num_workgroups.${axis}`,
  lane_id: () => LANE,
  warp_id: () => '(local_index / 32u)',
} as const;

/** Renders a legalized body as WGSL statements, indented by two spaces per level. */
export class WgslBodyWriter {
  readonly lines: string[] = [];
  /** The language extensions rendered builtins come from, for the module's `requires`. */
  readonly extensions = new Set<string>();
  /** The integer types rendered conversions from f32 saturate into, each a module function. */
  readonly saturatingConversions = new Set<ScalarType>();
  private temporaries = 0;
  private indent = '  ';

  constructor(
    private readonly spec: KernelSpec,
    private readonly subgroups: boolean,
    /** Buffers declared as arrays of vectors, with their width (see vectorBufferWidths). */
    private readonly vectorBuffers: ReadonlyMap<string, number> = new Map(),
    /** How shared arrays are named: each dispatch of a module has its own. */
    private readonly sharedNames: (name: string) => string = sharedName,
  ) {}

  block(statements: readonly Stmt[]): void {
    for (const statement of statements) this.statement(statement);
  }

  private emit(...lines: string[]): void {
    for (const line of lines) this.lines.push(`${this.indent}${line}`);
  }

  private nested(statements: readonly Stmt[]): void {
    const outer = this.indent;
    this.indent = `${outer}  `;
    this.block(statements);
    this.indent = outer;
  }

  private temporary = (): string => `forge_t${++this.temporaries}`;

  private statement(statement: Stmt): void {
    const summary = printStatementHeader(statement);
    this.emit(`// ${summary.replace(/ \{$/, '')}`);
    switch (statement.op) {
      case 'let':
        return this.emit(
          `var ${localName(statement.name)}: ${wgslType(statement.type)} = ${this.expression(statement.value)};`,
        );
      case 'assign':
        return this.emit(`${localName(statement.name)} = ${this.expression(statement.value)};`);
      case 'store':
        return this.emit(
          `${this.memory(statement.memory)}[${this.expression(statement.index)}] = ${this.expression(statement.value)};`,
        );
      case 'load_vector': {
        const memory = this.memory(statement.memory);
        const index = this.expression(statement.index);
        const names = statement.names.map(localName);
        const type = wgslType(statement.type);
        if (this.vectorBuffers.get(statement.memory) === names.length) {
          const vector = this.temporary();
          this.emit(`let ${vector} = ${memory}[(${index}) / ${names.length}u];`);
          return this.emit(
            ...names.map((name, k) => `let ${name}: ${type} = ${vector}.${'xyzw'[k]};`),
          );
        }
        const base = this.temporary();
        this.emit(`let ${base}: u32 = ${index};`);
        return this.emit(
          ...names.map((name, k) => `let ${name}: ${type} = ${memory}[${base} + ${k}u];`),
        );
      }
      case 'store_vector': {
        const memory = this.memory(statement.memory);
        const index = this.expression(statement.index);
        const values = statement.values.map((value) => this.expression(value));
        const width = values.length;
        if (this.vectorBuffers.get(statement.memory) === width) {
          const type = wgslType(statement.values[0]?.type ?? 'u32');
          return this.emit(
            `${memory}[(${index}) / ${width}u] = vec${width}<${type}>(${values.join(', ')});`,
          );
        }
        // WGSL has no vector store into an array of scalars: one assignment per element.
        const base = this.temporary();
        this.emit(`let ${base}: u32 = ${index};`);
        return this.emit(...values.map((value, k) => `${memory}[${base} + ${k}u] = ${value};`));
      }
      case 'if':
        this.emit(`if (${this.expression(statement.condition)}) {`);
        this.nested(statement.then);
        if (statement.else.length > 0) {
          this.emit('} else {');
          this.nested(statement.else);
        }
        return this.emit('}');
      case 'for': {
        const index = localName(statement.name);
        const type = wgslType(statement.type);
        this.emit(
          `for (var ${index}: ${type} = ${this.expression(statement.start)}; ${index} < ${this.expression(statement.end)}; ${index} = ${index} + ${this.expression(statement.step)}) {`,
        );
        this.nested(statement.body);
        return this.emit('}');
      }
      case 'barrier':
        return this.emit('workgroupBarrier();');
      case 'shuffle': {
        const lane = shuffleSourceLane(statement.mode, this.expression(statement.lane));
        return this.emit(
          ...shuffleLines(
            statement.type,
            this.expression(statement.value),
            lane,
            localName(statement.name),
            this.temporary,
          ),
        );
      }
      case 'reduce': {
        const result = localName(statement.name);
        this.emit(
          `var ${result}: ${wgslType(statement.type)} = ${this.expression(statement.value)};`,
        );
        return this.emit(
          ...reduceLines(
            statement.type,
            statement.reduction,
            result,
            this.subgroups,
            this.temporary,
          ),
        );
      }
      case 'mma':
        return this.emit(
          ...mmaLines(
            statement.shape,
            statement.a.map((word) => this.expression(word)),
            statement.b.map((word) => this.expression(word)),
            statement.c.map((value) => this.expression(value)),
            statement.names.map(localName),
            this.temporary,
          ),
        );
      default:
        return assertNever(statement, 'statement op');
    }
  }

  private memory(name: string): string {
    if (this.spec.buffers.some((buffer) => buffer.name === name)) return bufferName(name);
    if (this.spec.shared.some((array) => array.name === name)) return this.sharedNames(name);
    throw new InternalError('wgsl', `no buffer or shared array named '${name}'`);
  }

  expression(expression: Expr): string {
    switch (expression.op) {
      case 'const':
        return wgslLiteral(expression.type, expression.value);
      case 'var':
        return localName(expression.name);
      case 'param':
        return `${PARAMS_VARIABLE}.${expression.name}`;
      case 'schedule':
        throw new InternalError('wgsl', 'schedule knobs must be bound before printing');
      case 'builtin':
        if (expression.name === 'workgroup_size')
          throw new InternalError('wgsl', 'workgroup_size must be bound before printing');
        return BUILTINS[expression.name](expression.axis ?? 'x');
      case 'load':
        return `${this.memory(expression.memory)}[${this.expression(expression.args[0])}]`;
      case 'convert':
        if (saturatingConversion(expression.type, expression.args[0].type) !== undefined)
          this.saturatingConversions.add(expression.type);
        return convertText(
          this.expression(expression.args[0]),
          expression.type,
          expression.args[0].type,
        );
      case 'bitcast':
        return bitcastText(this.expression(expression.args[0]), expression.type);
      case 'unpack_half':
        return unpackHalfText(this.expression(expression.args[0]), expression.half);
      case 'pack_half':
        return packHalfText(
          this.expression(expression.args[0]),
          this.expression(expression.args[1]),
        );
      case 'fma':
        return FMA_TEMPLATE(
          expression.args.map((arg) => this.expression(arg)),
          expression.type,
        );
      case 'select':
        return SELECT_TEMPLATE(
          expression.args.map((arg) => this.expression(arg)),
          expression.type,
        );
      default: {
        const args = expression.args.map((arg) => this.expression(arg));
        const operandType = expression.args[0].type;
        if (isWordExpr(expression)) {
          const lowering = WORD_LOWERINGS[expression.op];
          if ('expand' in lowering)
            throw new InternalError('wgsl', `${expression.op} must be expanded before printing`);
          if (lowering.requires !== undefined) this.extensions.add(lowering.requires);
          return lowering.template(args, operandType);
        }
        if (isUnaryExpr(expression)) return UNARY_TEMPLATES[expression.op](args, operandType);
        if (isBinaryExpr(expression)) return BINARY_TEMPLATES[expression.op](args, operandType);
        return assertNever(expression, 'expression op');
      }
    }
  }
}
