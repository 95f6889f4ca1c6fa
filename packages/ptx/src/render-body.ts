import {
  ELEMENT_BYTES,
  UnsupportedError,
  assertNever,
  f16Bits,
  isBinaryExpr,
  isUnaryExpr,
  isWordExpr,
  printStatementHeader,
  type BufferDecl,
  type Expr,
  type ForStmt,
  type IfStmt,
  type KernelSpec,
  type ScalarType,
  type SharedDecl,
  type Stmt,
} from '@forge/ir';
import {
  BINARY_MNEMONICS,
  FMA_MNEMONIC,
  SELECT_MNEMONIC,
  UNARY_MNEMONICS,
  WORD_INSTRUCTIONS,
  type Mnemonic,
} from './ops/arithmetic.js';
import {
  bitcastMnemonic,
  convertMnemonic,
  packHalfInstructions,
  unpackHalfInstructions,
} from './ops/conversion.js';
import { globalLoad, globalStore, sharedLoad, sharedStore } from './ops/memory.js';
import { arithmeticType, bitType, f32Immediate } from './ops/types.js';
import { mmaForm } from './ops/mma.js';
import { FULL_WARP_MASK, SHUFFLE_FORMS } from './ops/warp.js';
import { RegisterAllocator, registerClass } from './registers.js';
import { LineTracker } from './line-info.js';
import type { PtxTarget } from './targets.js';

/** An instruction operand: a register, or an immediate the instruction can take inline. */
interface Operand {
  readonly text: string;
  readonly immediate: boolean;
}

const SPECIAL_REGISTERS = {
  local_id: '%tid.x',
  lane_id: '%laneid',
  workgroup_id: '%ctaid',
  num_workgroups: '%nctaid',
} as const;

export const paramSymbol = (name: string): string => `param_${name}`;
export const sharedSymbol = (name: string): string => `shared_${name}`;

/** Renders a legalized body to PTX instruction lines, one virtual register per value. */
export class PtxBodyWriter {
  readonly lines: string[] = [];
  readonly registers = new RegisterAllocator();
  private readonly locals = new Map<string, string>();
  private readonly params = new Map<string, string>();
  private readonly buffers = new Map<string, { register: string; declaration: BufferDecl }>();
  private readonly shared = new Map<string, { register: string; declaration: SharedDecl }>();
  private labelCount = 0;
  /**
   * Address registers of `memory[var]`, innermost block last: a later access at `var + constant`
   * reuses one with an immediate offset instead of recomputing it (ptxas would, our counts would not).
   */
  private readonly addresses: Map<string, { variable: string; address: string }>[] = [new Map()];

  constructor(
    private readonly spec: KernelSpec,
    private readonly target: PtxTarget,
    /** Which printed-IR line each instruction belongs to; without one, no `.loc` is written. */
    private readonly lineInfo = new LineTracker(),
  ) {}

  /** Loads the params and buffer addresses the body uses, once, at entry. */
  prologue(used: { params: ReadonlySet<string>; memories: ReadonlySet<string> }): void {
    for (const buffer of this.spec.buffers.filter((candidate) =>
      used.memories.has(candidate.name),
    )) {
      const generic = this.registers.next('rd');
      const global = this.registers.next('rd');
      this.emit(
        `ld.param.u64 ${generic}, [${paramSymbol(buffer.name)}];`,
        `cvta.to.global.u64 ${global}, ${generic};`,
      );
      this.buffers.set(buffer.name, { register: global, declaration: buffer });
    }
    for (const param of this.spec.params.filter((candidate) => used.params.has(candidate.name))) {
      const register = this.registers.forType(param.type);
      this.emit(
        `ld.param.${arithmeticType(param.type)} ${register}, [${paramSymbol(param.name)}];`,
      );
      this.params.set(param.name, register);
    }
    for (const array of this.spec.shared.filter((candidate) => used.memories.has(candidate.name))) {
      const register = this.registers.next('r');
      this.emit(`mov.u32 ${register}, ${sharedSymbol(array.name)};`);
      this.shared.set(array.name, { register, declaration: array });
    }
  }

  block(statements: readonly Stmt[]): void {
    this.addresses.push(new Map());
    for (const statement of statements) this.statement(statement);
    this.addresses.pop();
  }

  /** The innermost cached address under `key`. */
  private cachedAddress(key: string): { variable: string; address: string } | undefined {
    for (let depth = this.addresses.length - 1; depth >= 0; depth--) {
      const cached = this.addresses[depth]?.get(key);
      if (cached !== undefined) return cached;
    }
    return undefined;
  }

  /** Forgets the cached addresses computed from `names` (they are about to change). */
  private forgetAddresses(names: ReadonlySet<string>): void {
    for (const scope of this.addresses)
      for (const [key, { variable }] of scope) if (names.has(variable)) scope.delete(key);
  }

  private emit(...instructions: string[]): void {
    const directive = this.lineInfo.directive();
    if (directive !== undefined && instructions.length > 0) this.lines.push(`\t${directive}`);
    for (const instruction of instructions) this.lines.push(`\t${instruction}`);
  }

  private label(name: string): void {
    this.lines.push(`${name}:`);
  }

  private unsupported(op: string, detail: string): never {
    throw new UnsupportedError(`ptx ${this.target.arch}`, op, detail);
  }

  private mnemonic(table: Mnemonic, op: string, type: ScalarType): string {
    return table(type, this.target) ?? this.unsupported(op, `no instruction for ${type}`);
  }

  private statement(statement: Stmt): void {
    const line = this.lineInfo.enterStatement();
    const summary = printStatementHeader(statement);
    this.lines.push(`\t// ${summary.replace(/ \{$/, '')}`);
    switch (statement.op) {
      case 'let':
        this.expression(statement.value, this.local(statement.name, statement.type));
        return;
      case 'assign':
        this.expression(statement.value, this.local(statement.name, statement.value.type));
        return this.forgetAddresses(new Set([statement.name]));
      case 'store':
        return this.store(statement.memory, statement.index, statement.value);
      case 'load_vector': {
        const { address, instruction } = this.loadFrom(
          statement.memory,
          statement.index,
          statement.names.length,
        );
        const registers = statement.names.map((name) => this.local(name, statement.type));
        return this.emit(`${instruction} {${registers.join(', ')}}, [${address}];`);
      }
      case 'store_vector':
        return this.storeVector(statement.memory, statement.index, statement.values);
      case 'if':
        return this.ifStatement(statement, line);
      case 'for':
        return this.forStatement(statement, line);
      case 'barrier':
        return this.emit('bar.sync 0;');
      case 'shuffle': {
        const value = this.register(this.expression(statement.value), statement.type);
        const lane = this.expression(statement.lane);
        const form = SHUFFLE_FORMS[statement.mode];
        const destination = this.local(statement.name, statement.type);
        return this.emit(
          `shfl.sync.${form.mode}.b32 ${destination}, ${value}, ${lane.text}, ${form.clamp}, ${FULL_WARP_MASK};`,
        );
      }
      case 'reduce':
        return this.unsupported('reduce', 'reductions must be lowered to shuffles before printing');
      case 'mma': {
        const form =
          mmaForm(statement.shape, this.target) ??
          this.unsupported('mma', `no ${statement.shape} form; lower it to shuffles first`);
        // mma takes registers only; D accumulates in place from the second step on.
        const words = (values: readonly Expr[]) =>
          values.map((value) => this.register(this.expression(value), value.type));
        const [a, b] = [words(statement.a), words(statement.b)];
        let c = words(statement.c);
        const d = statement.names.map((name) => this.local(name, 'f32'));
        for (const step of form.steps) {
          const pick = (registers: readonly string[], indices: readonly number[]) =>
            `{${indices.map((index) => registers[index]).join(', ')}}`;
          this.emit(
            `${form.instruction} {${d.join(', ')}}, ${pick(a, step.a)}, ${pick(b, step.b)}, {${c.join(', ')}};`,
          );
          c = d;
        }
        return;
      }
      default:
        return assertNever(statement, 'statement op');
    }
  }

  private local(name: string, type: ScalarType): string {
    let register = this.locals.get(name);
    if (register === undefined) {
      register = this.registers.forType(type);
      this.locals.set(name, register);
    }
    return register;
  }

  private ifStatement(statement: IfStmt, line: number | undefined): void {
    const id = ++this.labelCount;
    const predicate = this.register(this.expression(statement.condition), 'bool');
    const end = `$L_endif_${id}`;
    const otherwise = statement.else.length > 0 ? `$L_else_${id}` : end;
    this.emit(`@!${predicate} bra ${otherwise};`);
    this.block(statement.then);
    if (statement.else.length > 0) {
      // The jump over the else branch is the `if`'s own, not its last statement's.
      this.lineInfo.resume(line);
      this.emit(`bra.uni ${end};`);
      this.label(otherwise);
      this.block(statement.else);
    }
    this.label(end);
  }

  private forStatement(statement: ForStmt, line: number | undefined): void {
    // An address cached before the loop from a local the body changes is stale from the 2nd trip.
    this.forgetAddresses(assignedNames(statement.body));
    const id = ++this.labelCount;
    const index = this.local(statement.name, statement.type);
    const type = arithmeticType(statement.type);
    this.expression(statement.start, index);
    this.label(`$L_loop_${id}`);
    const end = this.expression(statement.end);
    const done = this.registers.next('p');
    this.emit(`setp.ge.${type} ${done}, ${index}, ${end.text};`, `@${done} bra $L_endloop_${id};`);
    this.block(statement.body);
    // The step and the jump back are the loop header's, not its last statement's.
    this.lineInfo.resume(line);
    const step = this.expression(statement.step);
    this.emit(`add.${type} ${index}, ${index}, ${step.text};`, `bra.uni $L_loop_${id};`);
    this.label(`$L_endloop_${id}`);
  }

  private store(memory: string, indexExpression: Expr, valueExpression: Expr): void {
    const value = this.register(this.expression(valueExpression), valueExpression.type);
    const { address, element, kind } = this.address(memory, indexExpression);
    const instruction = kind === 'global' ? globalStore(element) : sharedStore(element);
    this.emit(`${instruction} [${address}], ${value};`);
  }

  /** One `st.v2`/`st.v4` of every value, each in a register (vector stores take no immediates). */
  private storeVector(memory: string, indexExpression: Expr, values: readonly Expr[]): void {
    const registers = values.map((value) => this.register(this.expression(value), value.type));
    const { address, element, kind } = this.address(memory, indexExpression);
    const width = values.length;
    const instruction =
      kind === 'global' ? globalStore(element, width) : sharedStore(element, width);
    this.emit(`${instruction} [${address}], {${registers.join(', ')}};`);
  }

  /**
   * The address operand of element `index` of a buffer or shared array. An index `v + c` (c a small
   * constant, v a local) reuses the address of `memory[v]` computed earlier in an enclosing block,
   * or computes it for later accesses, and adds c elements as an immediate offset.
   */
  private address(
    memory: string,
    indexExpression: Expr,
  ): { address: string; element: BufferDecl['element']; kind: 'global' | 'shared' } {
    const buffer = this.buffers.get(memory);
    const shared = this.shared.get(memory);
    const base = buffer ?? shared;
    if (base === undefined) return this.unsupported('load', `memory '${memory}' was not set up`);
    const element = base.declaration.element;
    const bytes = ELEMENT_BYTES[element];
    const kind = buffer === undefined ? 'shared' : 'global';
    const { variable, offset } = splitIndex(indexExpression);
    const withOffset = (address: string) =>
      offset === 0 ? address : `${address}+${offset * bytes}`;
    if (variable !== undefined) {
      const key = `${memory}[${variable.name}]`;
      const cached = this.cachedAddress(key);
      if (cached !== undefined) return { address: withOffset(cached.address), element, kind };
      const address = this.scaledAddress(base.register, this.expression(variable), bytes, kind);
      this.addresses.at(-1)?.set(key, { variable: variable.name, address });
      return { address: withOffset(address), element, kind };
    }
    const index = this.expression(indexExpression);
    if (index.immediate)
      return { address: `${base.register}+${Number(index.text) * bytes}`, element, kind };
    return { address: this.scaledAddress(base.register, index, bytes, kind), element, kind };
  }

  /** base + index · bytes in a new register: 64-bit for global memory, 32-bit for shared. */
  private scaledAddress(
    base: string,
    index: Operand,
    bytes: number,
    kind: 'global' | 'shared',
  ): string {
    if (kind === 'global') {
      const offset = this.registers.next('rd');
      const address = this.registers.next('rd');
      this.emit(
        `mul.wide.u32 ${offset}, ${index.text}, ${bytes};`,
        `add.s64 ${address}, ${base}, ${offset};`,
      );
      return address;
    }
    const offset = this.registers.next('r');
    const address = this.registers.next('r');
    this.emit(
      `shl.b32 ${offset}, ${index.text}, ${Math.log2(bytes)};`,
      `add.s32 ${address}, ${base}, ${offset};`,
    );
    return address;
  }

  /** The address of element `index` and the load of `width` elements from there. */
  private loadFrom(
    memory: string,
    index: Expr,
    width: number,
  ): { address: string; instruction: string } {
    const { address, element, kind } = this.address(memory, index);
    const access = this.buffers.get(memory)?.declaration.access ?? 'read_write';
    const instruction =
      kind === 'global' ? globalLoad(element, access, width) : sharedLoad(element, width);
    return { address, instruction };
  }

  /** Puts an operand in a register of `type` when the instruction cannot take an immediate. */
  private register(operand: Operand, type: ScalarType): string {
    if (!operand.immediate) return operand.text;
    const register = this.registers.forType(type);
    this.emit(`mov.${bitType(type)} ${register}, ${operand.text};`);
    return register;
  }

  /** Evaluates an expression; with `destination`, the result is written there. */
  private expression(expression: Expr, destination?: string): Operand {
    const result = (instruction: (out: string) => string): Operand => {
      const out = destination ?? this.registers.forType(expression.type);
      this.emit(instruction(out));
      return { text: out, immediate: false };
    };
    const value = (operand: Operand): Operand => {
      if (destination === undefined || operand.text === destination) return operand;
      return result((out) => `mov.${bitType(expression.type)} ${out}, ${operand.text};`);
    };
    switch (expression.op) {
      case 'const':
        return this.constant(expression.type, expression.value, destination);
      case 'var':
        return value({
          text:
            this.locals.get(expression.name) ??
            this.unsupported('var', `'${expression.name}' has no register`),
          immediate: false,
        });
      case 'param':
        return value({
          text:
            this.params.get(expression.name) ??
            this.unsupported('param', `'${expression.name}' was not loaded`),
          immediate: false,
        });
      case 'schedule':
        return this.unsupported('schedule', 'schedule knobs must be bound before printing');
      case 'builtin': {
        if (expression.name === 'warp_id') {
          const local = this.expression({ op: 'builtin', type: 'u32', name: 'local_id' });
          return result((out) => `shr.u32 ${out}, ${local.text}, 5;`);
        }
        if (expression.name === 'workgroup_size')
          return this.unsupported('builtin', 'workgroup_size must be bound before printing');
        const special = SPECIAL_REGISTERS[expression.name];
        const axis = expression.axis === undefined ? '' : `.${expression.axis}`;
        return result((out) => `mov.u32 ${out}, ${special}${axis};`);
      }
      case 'load': {
        const { address, instruction } = this.loadFrom(expression.memory, expression.args[0], 1);
        return result((out) => `${instruction} ${out}, [${address}];`);
      }
      case 'convert':
      case 'bitcast': {
        const source = expression.args[0];
        // u32 and i32 share the b32 register class: their bitcast is the same register.
        if (
          expression.op === 'bitcast' &&
          registerClass(source.type) === registerClass(expression.type)
        ) {
          const operand = this.expression(source);
          if (!operand.immediate) return value(operand);
        }
        const mnemonic = (expression.op === 'convert' ? convertMnemonic : bitcastMnemonic)(
          source.type,
          expression.type,
        );
        if (mnemonic === undefined)
          return this.unsupported(expression.op, `${source.type} to ${expression.type}`);
        const operand = this.register(this.expression(source), source.type);
        return result((out) => `${mnemonic} ${out}, ${operand};`);
      }
      case 'unpack_half': {
        const word = this.register(this.expression(expression.args[0]), 'u32');
        const half = this.registers.next('h');
        const out = destination ?? this.registers.forType('f32');
        this.emit(...unpackHalfInstructions(expression.half, word, half, out));
        return { text: out, immediate: false };
      }
      case 'pack_half': {
        const lo = this.register(this.expression(expression.args[0]), 'f32');
        const hi = this.register(this.expression(expression.args[1]), 'f32');
        const halves = [this.registers.next('h'), this.registers.next('h')] as const;
        const out = destination ?? this.registers.forType('u32');
        this.emit(...packHalfInstructions(lo, hi, halves, out));
        return { text: out, immediate: false };
      }
      case 'select': {
        const mnemonic = this.mnemonic(SELECT_MNEMONIC, 'select', expression.type);
        const [condition, ifTrue, ifFalse] = expression.args.map((arg) => this.expression(arg)) as [
          Operand,
          Operand,
          Operand,
        ];
        const predicate = this.register(condition, 'bool');
        return result(
          (out) => `${mnemonic} ${out}, ${ifTrue.text}, ${ifFalse.text}, ${predicate};`,
        );
      }
      case 'fma': {
        const mnemonic = this.mnemonic(FMA_MNEMONIC, 'fma', expression.type);
        // As for the other arithmetic: f16 takes registers only, 32-bit types immediates inline.
        const args = expression.args.map((arg) => {
          const operand = this.expression(arg);
          return arg.type === 'f16' ? this.register(operand, arg.type) : operand.text;
        });
        return result((out) => `${mnemonic} ${out}, ${args.join(', ')};`);
      }
      default: {
        if (isWordExpr(expression)) {
          const args = expression.args.map((arg) => this.expression(arg).text);
          return result((out) => WORD_INSTRUCTIONS[expression.op](out, args));
        }
        const operandType = expression.args[0].type;
        const table: Mnemonic | undefined =
          isUnaryExpr(expression) ? UNARY_MNEMONICS[expression.op]
          : isBinaryExpr(expression) ? BINARY_MNEMONICS[expression.op]
          : assertNever(expression, 'expression op'); // prettier-ignore
        const mnemonic = this.mnemonic(table, expression.op, operandType);
        // f16 and predicate instructions take registers only; 32-bit ones take immediates inline.
        const operands = expression.args.map((arg) => {
          const operand = this.expression(arg);
          return arg.type === 'f16' || arg.type === 'bool'
            ? this.register(operand, arg.type)
            : operand.text;
        });
        return result((out) => `${mnemonic} ${out}, ${operands.join(', ')};`);
      }
    }
  }

  private constant(type: ScalarType, value: number | boolean, destination?: string): Operand {
    if (type === 'bool') {
      const out = destination ?? this.registers.next('p');
      this.emit(`setp.ne.u32 ${out}, ${value === true ? 1 : 0}, 0;`);
      return { text: out, immediate: false };
    }
    const numeric = value as number;
    const text =
      type === 'f32' ? f32Immediate(numeric)
      : type === 'f16' ? `0x${f16Hex(numeric)}`
      : String(type === 'u32' ? numeric >>> 0 : numeric | 0); // prettier-ignore
    if (destination === undefined && type !== 'f16') return { text, immediate: true };
    const out = destination ?? this.registers.next('h');
    this.emit(`mov.${bitType(type)} ${out}, ${text};`);
    return { text: out, immediate: false };
  }
}

/** Largest constant an index may add as an immediate: far below any u32 wrap of a real index. */
const MAX_IMMEDIATE_INDEX = 0xffff;

/** `v + c` as the local v and c (0 for a bare local); no variable for any other index. */
function splitIndex(index: Expr): { variable?: Extract<Expr, { op: 'var' }>; offset: number } {
  if (index.op === 'var') return { variable: index, offset: 0 };
  if (index.op !== 'add' || index.type !== 'u32') return { offset: 0 };
  const [left, right] = index.args;
  const [variable, constant] = left.op === 'var' ? [left, right] : [right, left];
  if (variable.op !== 'var' || constant.op !== 'const') return { offset: 0 };
  const offset = constant.value as number;
  return offset <= MAX_IMMEDIATE_INDEX ? { variable, offset } : { offset: 0 };
}

/** Every local a statement list assigns, nested blocks included (loop indices too). */
function assignedNames(statements: readonly Stmt[], names = new Set<string>()): Set<string> {
  for (const statement of statements) {
    if (statement.op === 'assign') names.add(statement.name);
    if (statement.op === 'if') {
      assignedNames(statement.then, names);
      assignedNames(statement.else, names);
    }
    if (statement.op === 'for') {
      names.add(statement.name);
      assignedNames(statement.body, names);
    }
  }
  return names;
}

function f16Hex(value: number): string {
  return f16Bits(value).toString(16).toUpperCase().padStart(4, '0');
}
