// An `.entry` body: declarations, labels and instructions, with nested `{ }` blocks flattened.
import type {
  Instruction,
  Operand,
  PtxType,
  RegisterDeclaration,
  SourceLocation,
  SourcePosition,
  Statement,
  VariableDeclaration,
} from '../ast.js';
import { SIMULATOR_LIMITS, overLimit } from '../limits.js';
import type { Token } from './lexer.js';
import { expectType, parseVariables } from './directives.js';
import { parseOperands } from './operands.js';
import type { TokenStream } from './token-stream.js';

export interface ParsedBody {
  readonly registers: readonly RegisterDeclaration[];
  readonly variables: readonly VariableDeclaration[];
  readonly body: readonly Statement[];
}

export const DEVICE_FUNCTIONS_UNSUPPORTED = 'device functions are not supported';

/**
 * Statements parsed so far in the module (instructions, labels, declarations, parameters and
 * entries: everything the module keeps an object for), against SIMULATOR_LIMITS.statements.
 */
export interface StatementCount {
  statements: number;
}

/** Counts one more statement at `line`, refusing the module past SIMULATOR_LIMITS.statements. */
export function countStatement(stream: TokenStream, count: StatementCount, line: number): void {
  if (++count.statements > SIMULATOR_LIMITS.statements)
    throw stream.limitAt(
      line,
      `a module of more than ${SIMULATOR_LIMITS.statements} statements (instructions, labels, declarations) is ${overLimit('statements')}`,
      'statements',
    );
}

const OPCODE = /^[a-z][a-z0-9_]*$/;
const MODIFIER = /^[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*$/;

class BodyBuilder {
  readonly registers: RegisterDeclaration[] = [];
  readonly variables: VariableDeclaration[] = [];
  readonly body: Statement[] = [];
  private readonly registerTypes = new Map<string, { type: PtxType; count: number | undefined }>();
  private readonly labels = new Map<string, number>();
  private readonly variableNames = new Set<string>();
  /** Instructions in this entry so far, against SIMULATOR_LIMITS.entryInstructions. */
  private instructions = 0;

  constructor(
    private readonly stream: TokenStream,
    private readonly count: StatementCount,
  ) {}

  /** The latest `.loc`, which the instructions after it carry. */
  private source: SourceLocation['source'];

  location(line: number): SourceLocation {
    const location = { line, text: this.stream.source.text(line) };
    return this.source === undefined ? location : { ...location, source: this.source };
  }

  /**
   * Statements up to the `}` matching `open`; nested blocks share the entry's scope, so only
   * their depth is kept (no recursion: hostile nesting meets SIMULATOR_LIMITS.blockDepth).
   */
  parseBlock(open: Token): void {
    const stream = this.stream;
    const opens: Token[] = [open];
    for (;;) {
      const token = stream.peek();
      if (token.kind === 'eof') {
        const innermost = opens[opens.length - 1] ?? open;
        throw stream.errorAt(innermost.line, `'{' opened here is never closed`);
      }
      if (token.kind === 'punct' && token.text === '}') {
        stream.next();
        opens.pop();
        if (opens.length === 0) return;
      } else if (token.kind === 'punct' && token.text === '{') {
        // The entry's own `{` is not a level: ptxas takes 1663 levels inside it.
        if (opens.length >= SIMULATOR_LIMITS.blockDepth + 1)
          throw stream.limitAt(
            token.line,
            `'{' nested ${opens.length} deep in an entry is ${overLimit('blockDepth')}`,
            'blockDepth',
          );
        stream.next();
        opens.push(token);
      } else if (token.kind === 'directive') {
        this.parseDeclaration(token);
      } else if (token.kind === 'word' && stream.atPunct(':', 1)) {
        this.parseLabel(token);
      } else if (token.kind === 'word' || (token.kind === 'punct' && token.text === '@')) {
        if (++this.instructions > SIMULATOR_LIMITS.entryInstructions)
          throw stream.limitAt(
            token.line,
            `an entry of more than ${SIMULATOR_LIMITS.entryInstructions} instructions is ${overLimit('entryInstructions')}`,
            'entryInstructions',
          );
        this.push(this.parseInstruction(token.line));
      } else {
        throw stream.unexpected('expected an instruction, label or declaration');
      }
    }
  }

  private push(statement: Statement): void {
    countStatement(this.stream, this.count, statement.location.line);
    this.body.push(statement);
  }

  private parseDeclaration(token: Token): void {
    const stream = this.stream;
    const location = this.location(token.line);
    stream.next();
    switch (token.text) {
      case 'reg':
        this.parseRegisters(location);
        return;
      case 'shared':
      case 'local':
        for (const variable of parseVariables(stream, token.text, { external: false, location })) {
          this.addVariable(variable);
        }
        return;
      case 'loc': {
        // `.loc file line column[, function_name label][, inlined_at file line column]`.
        const at = this.position();
        let inlinedAt: SourcePosition | undefined;
        while (stream.peek().line === token.line && stream.eatPunct(',')) {
          const key = stream.expectWord('function_name or inlined_at after .loc');
          if (key.text === 'function_name') stream.expectWord('a label after function_name');
          else if (key.text === 'inlined_at') inlinedAt = this.position();
          else throw stream.errorAt(key.line, `unknown .loc attribute '${key.text}'`);
        }
        this.source = inlinedAt === undefined ? { at } : { at, inlinedAt };
        return;
      }
      case 'pragma':
        // Optimization hints (`.pragma "nounroll";`) do not change what the code computes.
        do {
          if (stream.peek().kind !== 'string')
            throw stream.unexpected('expected a string after .pragma');
          stream.next();
        } while (stream.eatPunct(','));
        stream.expectSemicolon('.pragma');
        return;
      case 'func':
        throw stream.errorAt(token.line, DEVICE_FUNCTIONS_UNSUPPORTED);
      case 'param':
        throw stream.errorAt(token.line, `.param inside a body (call sequences) is not supported`);
      default:
        throw stream.errorAt(
          token.line,
          `unknown or unsupported directive '.${token.text}' in entry body`,
        );
    }
  }

  private position(): SourcePosition {
    const stream = this.stream;
    return {
      file: stream.expectCount('a file index in .loc'),
      line: stream.expectCount('a line in .loc'),
      column: stream.expectCount('a column in .loc'),
    };
  }

  // `.reg .b32 %r<49>;`, `.reg .f32 %a, %b;`, `.reg .f16 low, high;`.
  private parseRegisters(location: SourceLocation): void {
    const stream = this.stream;
    const type = expectType(stream, 'register');
    do {
      const nameToken = stream.expectWord('a register name');
      const name = nameToken.text;
      if (name.includes('.') || name.includes(':') || name === '_') {
        throw stream.errorAt(nameToken.line, `bad register name '${name}'`);
      }
      let count: number | undefined;
      if (stream.eatPunct('<')) {
        count = stream.expectCount('a register count');
        if (count <= 0) throw stream.errorAt(nameToken.line, 'register count must be positive');
        if (count > SIMULATOR_LIMITS.registersPerDeclaration)
          throw stream.limitAt(
            nameToken.line,
            `${name}<${count}> is ${overLimit('registersPerDeclaration', ' registers')}, as ptxas's`,
            'registersPerDeclaration',
          );
        stream.expectPunct('>', 'after the register count');
      }
      this.addRegister({ type, name, ...(count === undefined ? {} : { count }), location });
    } while (stream.eatPunct(','));
    stream.expectSemicolon('.reg declaration');
  }

  // Sibling blocks (as in inline asm from cuda_fp16.h) may redeclare a name; the same type merges.
  private addRegister(declaration: RegisterDeclaration): void {
    countStatement(this.stream, this.count, declaration.location.line);
    const previous = this.registerTypes.get(declaration.name);
    if (previous !== undefined) {
      if (previous.type === declaration.type && previous.count === declaration.count) return;
      throw this.stream.errorAt(
        declaration.location.line,
        `register '${declaration.name}' redeclared with a different type or count`,
      );
    }
    this.registerTypes.set(declaration.name, { type: declaration.type, count: declaration.count });
    this.registers.push(declaration);
  }

  private addVariable(variable: VariableDeclaration): void {
    countStatement(this.stream, this.count, variable.location.line);
    if (this.variableNames.has(variable.name)) {
      throw this.stream.errorAt(variable.location.line, `variable '${variable.name}' redeclared`);
    }
    this.variableNames.add(variable.name);
    this.variables.push(variable);
  }

  private parseLabel(token: Token): void {
    const stream = this.stream;
    const name = token.text;
    if (name.startsWith('%') || name.includes('.') || name.includes(':')) {
      throw stream.errorAt(token.line, `bad label name '${name}'`);
    }
    const previous = this.labels.get(name);
    if (previous !== undefined) {
      throw stream.errorAt(token.line, `label '${name}' already defined on line ${previous}`);
    }
    this.labels.set(name, token.line);
    stream.next();
    stream.next();
    this.push({ kind: 'label', name, location: this.location(token.line) });
  }

  private parseInstruction(line: number): Instruction {
    const stream = this.stream;
    let guard: Instruction['guard'];
    if (stream.eatPunct('@')) {
      const negated = stream.eatPunct('!');
      const register = stream.expectWord('a predicate register after @');
      if (register.text.includes('.') || register.text.includes(':')) {
        throw stream.errorAt(register.line, `bad guard predicate '${register.text}'`);
      }
      guard = { register: register.text, negated };
    }
    const opcodeToken = stream.expectWord('an instruction');
    const { opcode, modifiers } = stream.interner.opcode(opcodeToken.text);
    if (!OPCODE.test(opcode) || !modifiers.every((modifier) => MODIFIER.test(modifier))) {
      throw stream.errorAt(opcodeToken.line, `'${opcodeToken.text}' is not an instruction`);
    }
    if (opcode === 'call')
      throw stream.errorAt(opcodeToken.line, `${DEVICE_FUNCTIONS_UNSUPPORTED} (call)`);
    const operands = parseOperands(stream);
    stream.expectSemicolon(`instruction '${opcodeToken.text}'`);
    const location = this.location(line);
    return guard === undefined
      ? { kind: 'instruction', opcode, modifiers, operands, location }
      : { kind: 'instruction', guard, opcode, modifiers, operands, location };
  }

  /**
   * Registers may be declared without `%` (`.reg .f16 low;`), so bare names parse as symbols;
   * this turns the declared ones into registers and checks vector elements and guards.
   */
  resolve(): Statement[] {
    // In place, and a statement is copied only when one of its operands changes.
    const body = this.body;
    for (let index = 0; index < body.length; index++) {
      const statement = body[index] as Statement;
      if (statement.kind === 'label') continue;
      const guard = statement.guard;
      if (
        guard !== undefined &&
        !guard.register.startsWith('%') &&
        !this.isRegister(guard.register)
      ) {
        throw this.stream.errorAt(
          statement.location.line,
          `guard '${guard.register}' is not a declared register`,
        );
      }
      let operands: Operand[] | undefined;
      statement.operands.forEach((operand, position) => {
        const resolved = this.resolveOperand(operand, statement.location);
        if (resolved === operand) return;
        operands ??= [...statement.operands];
        operands[position] = resolved;
      });
      if (operands !== undefined) body[index] = { ...statement, operands };
    }
    return body;
  }

  private resolveOperand(operand: Operand, location: SourceLocation): Operand {
    switch (operand.kind) {
      case 'symbol':
        return this.isRegister(operand.name)
          ? this.stream.interner.register(operand.name)
          : operand;
      case 'pair': {
        const first = this.resolveOperand(operand.first, location);
        const second = this.resolveOperand(operand.second, location);
        return first === operand.first && second === operand.second
          ? operand
          : { kind: 'pair', first, second };
      }
      case 'vector': {
        const elements = operand.elements.map((element) => this.resolveOperand(element, location));
        const bad = elements.find(
          (element) =>
            element.kind !== 'register' &&
            element.kind !== 'sink' &&
            element.kind !== 'integer' &&
            element.kind !== 'float',
        );
        if (bad !== undefined && bad.kind === 'symbol') {
          throw this.stream.errorAt(
            location.line,
            `vector element '${bad.name}' is not a register`,
          );
        }
        return elements.every((element, index) => element === operand.elements[index])
          ? operand
          : { kind: 'vector', elements };
      }
      case 'address':
        if (operand.element?.register !== undefined) {
          const { register } = operand.element;
          if (!register.startsWith('%') && !this.isRegister(register))
            throw this.stream.errorAt(
              location.line,
              `array index '${register}' is not a declared register`,
            );
          return operand;
        }
        if (operand.base?.kind === 'symbol' && this.isRegister(operand.base.name)) {
          return { ...operand, base: { kind: 'register', name: operand.base.name } };
        }
        return operand;
      default:
        return operand;
    }
  }

  private isRegister(name: string): boolean {
    const scalar = this.registerTypes.get(name);
    if (scalar !== undefined && scalar.count === undefined) return true;
    const digits = trailingDigits(name);
    if (digits === name.length) return false;
    const count = this.registerTypes.get(name.slice(0, digits))?.count;
    return count !== undefined && Number(name.slice(digits)) < count;
  }
}

/** Where the digits at the end of `name` start (`%r12`: 2); `name.length` when there are none. */
export function trailingDigits(name: string): number {
  let start = name.length;
  while (start > 0 && isDigit(name.charCodeAt(start - 1))) start--;
  return start;
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** Parses from just after the body's `{` through its matching `}`. */
export function parseBody(stream: TokenStream, open: Token, count: StatementCount): ParsedBody {
  const builder = new BodyBuilder(stream, count);
  builder.parseBlock(open);
  return { registers: builder.registers, variables: builder.variables, body: builder.resolve() };
}
