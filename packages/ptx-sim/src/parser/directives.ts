// Declarations: types, state-space variables (module and function scope) and `.entry` parameters.
import {
  isPtxType,
  typeBytes,
  type PtxType,
  type SourceLocation,
  type StateSpace,
  type VariableDeclaration,
} from '../ast.js';
import { SIMULATOR_LIMITS, overLimit } from '../limits.js';
import type { Token } from './lexer.js';
import { f32Bits, f32FromBits, f64Bits, f64FromBits, type NumberLiteral } from './numbers.js';
import { parseSignedLiteral } from './operands.js';
import type { TokenStream } from './token-stream.js';

const SPACES: ReadonlySet<string> = new Set<StateSpace>([
  'reg',
  'param',
  'global',
  'shared',
  'local',
  'const',
]);

export const isType = isPtxType;

export function isStateSpace(name: string): name is StateSpace {
  return SPACES.has(name);
}

/** A `.TYPE` directive, with a precise error for vector types and unknown names. */
export function expectType(stream: TokenStream, what: string): PtxType {
  const token = stream.peek();
  if (token.kind === 'directive' && isType(token.text)) {
    stream.next();
    return token.text;
  }
  throw typeError(stream, token, what);
}

function typeError(stream: TokenStream, token: Token, what: string): Error {
  if (token.kind === 'directive' && /^v[0-9]+$/.test(token.text)) {
    return stream.errorAt(token.line, `vector-typed ${what}s (.${token.text}) are not supported`);
  }
  return stream.unexpected(`expected the type of the ${what}`);
}

/** `.align N` (the directive already consumed): a power of two. */
export function expectAlignment(stream: TokenStream): number {
  const line = stream.peek().line;
  const align = stream.expectCount('an alignment after .align');
  if (align <= 0 || (align & (align - 1)) !== 0) {
    throw stream.errorAt(line, `alignment ${align} is not a power of two`);
  }
  return align;
}

export interface VariableOptions {
  /** `.extern` declarations may leave the array length empty (dynamic shared memory). */
  readonly external: boolean;
  readonly location: SourceLocation;
}

/**
 * `[.align N] .TYPE name[N] [= init], …;` after the state-space directive has been consumed.
 * Several names may share one declaration; each becomes its own VariableDeclaration.
 */
export function parseVariables(
  stream: TokenStream,
  space: StateSpace,
  options: VariableOptions,
): VariableDeclaration[] {
  let align: number | undefined;
  let type: PtxType | undefined;
  while (stream.peek().kind === 'directive') {
    if (stream.atDirective('align')) {
      stream.next();
      align = expectAlignment(stream);
    } else if (type === undefined) {
      type = expectType(stream, 'variable');
    } else {
      throw stream.unexpected('expected a variable name');
    }
  }
  if (type === undefined) throw typeError(stream, stream.peek(), 'variable');
  const declarations: VariableDeclaration[] = [];
  for (;;) {
    const nameToken = stream.expectWord('a variable name');
    const name = checkName(stream, nameToken);
    let length = parseArrayLength(stream);
    let initializer: bigint[] | undefined;
    if (stream.eatPunct('=')) {
      if (space !== 'global' && space !== 'const') {
        throw stream.errorAt(nameToken.line, `.${space} variables cannot have initializers`);
      }
      initializer = parseInitializer(stream, type);
      if (length === 'open') length = initializer.length;
      const expected = length ?? 1;
      if (initializer.length > expected) {
        throw stream.errorAt(nameToken.line, `too many initializers for '${name}'`);
      }
    }
    const dynamic = length === 'open';
    if (length === 'open') {
      if (!options.external) {
        throw stream.errorAt(nameToken.line, `array '${name}[]' needs a length or initializer`);
      }
      length = undefined;
    }
    declarations.push({
      space,
      type,
      name,
      align: align ?? typeBytes(type),
      ...(dynamic ? { dynamic: true } : {}),
      ...(length === undefined ? {} : { length }),
      ...(initializer === undefined ? {} : { initializer }),
      location: options.location,
    });
    if (!stream.eatPunct(',')) break;
  }
  stream.expectSemicolon(`.${space} declaration`);
  return declarations;
}

function checkName(stream: TokenStream, token: Token): string {
  const text = token.text;
  if (text.startsWith('%') || text.includes('.') || text.includes(':') || text === '_') {
    throw stream.errorAt(token.line, `bad variable name '${token.text}'`);
  }
  return token.text;
}

// `[N]`, `[N][M]` (flattened), `[]` ('open': extern, or sized by its initializer); none: scalar.
function parseArrayLength(stream: TokenStream): number | 'open' | undefined {
  let length: number | 'open' | undefined;
  while (stream.atPunct('[')) {
    const open = stream.next();
    if (stream.eatPunct(']')) {
      if (length !== undefined)
        throw stream.errorAt(open.line, 'only the first dimension may be []');
      length = 'open';
      continue;
    }
    const dimension = stream.expectCount('an array length');
    if (dimension <= 0) throw stream.errorAt(open.line, 'array length must be positive');
    stream.expectPunct(']', `to close the '[' on line ${open.line}`);
    if (length !== 'open') {
      length = (length ?? 1) * dimension;
      // Past 2^53 the count is no longer exact; every state space's limit is far below.
      if (!Number.isSafeInteger(length))
        throw stream.errorAt(open.line, `array of ${length} elements is too large`);
    }
  }
  return length;
}

// `= 5`, `= {1, 2, 3}`, `= {{1, 2}, {3, 4}}`: values become raw bit patterns of the element type.
function parseInitializer(stream: TokenStream, type: PtxType): bigint[] {
  const values: bigint[] = [];
  const parseItem = (depth: number): void => {
    if (stream.atPunct('{')) {
      const open = stream.next();
      if (depth >= SIMULATOR_LIMITS.blockDepth)
        throw stream.limitAt(
          open.line,
          `initializer '{' nested ${depth + 1} deep is ${overLimit('blockDepth')}`,
          'blockDepth',
        );
      for (;;) {
        parseItem(depth + 1);
        if (stream.eatPunct(',')) continue;
        stream.expectPunct('}', `to close the initializer '{' on line ${open.line}`);
        return;
      }
    }
    const line = stream.peek().line;
    const literal = parseSignedLiteral(stream);
    const bits = literalBits(literal, type);
    if (bits === undefined) throw stream.errorAt(line, `initializer does not fit type .${type}`);
    values.push(bits);
  };
  parseItem(0);
  return values;
}

function literalBits(literal: NumberLiteral, type: PtxType): bigint | undefined {
  const width = typeBytes(type) * 8;
  if (type === 'f32' || type === 'f64') {
    if (literal.kind === 'float' && literal.width === width) return literal.bits;
    const value =
      literal.kind === 'integer'
        ? Number(literal.value)
        : literal.width === 64
          ? f64FromBits(literal.bits)
          : f32FromBits(literal.bits);
    return type === 'f32' ? f32Bits(value) : f64Bits(value);
  }
  if (type === 'f16' || type === 'bf16' || type === 'f16x2' || type === 'bf16x2') {
    // Only exact bit patterns are accepted; rounding decimals to half precision is not done here.
    return literal.kind === 'integer' ? BigInt.asUintN(width, literal.value) : undefined;
  }
  if (literal.kind === 'float') return literal.width <= width ? literal.bits : undefined;
  return BigInt.asUintN(width, literal.value);
}

/**
 * One entry parameter after `.param`: `.TYPE [.align N] name[K]`, `.align N .b8 name[K]`, and the
 * pointer attributes nvcc writes (`.ptr .global .align 1`), which describe the pointee: ignored.
 */
export function parseParam(stream: TokenStream, location: SourceLocation): VariableDeclaration {
  let align: number | undefined;
  let type: PtxType | undefined;
  let pointer = false;
  while (stream.peek().kind === 'directive') {
    const token = stream.next();
    if (token.text === 'align') {
      const value = expectAlignment(stream);
      if (!pointer) align = value;
    } else if (token.text === 'ptr') {
      if (pointer) throw stream.errorAt(token.line, 'repeated .ptr');
      pointer = true;
    } else if (pointer && isStateSpace(token.text)) {
      continue;
    } else if (type === undefined && isType(token.text)) {
      type = token.text;
    } else {
      throw stream.errorAt(token.line, `unexpected .${token.text} in parameter`);
    }
  }
  if (type === undefined) throw typeError(stream, stream.peek(), 'parameter');
  const nameToken = stream.expectWord('a parameter name');
  const name = checkName(stream, nameToken);
  const length = parseArrayLength(stream);
  if (length === 'open')
    throw stream.errorAt(nameToken.line, `parameter '${name}[]' needs a length`);
  return {
    space: 'param',
    type,
    name,
    align: align ?? typeBytes(type),
    ...(length === undefined ? {} : { length }),
    location,
  };
}

/** `.reqntid 256`, `.maxntid 16, 16, 1`: one to three positive integers. */
export function parseThreadCounts(stream: TokenStream, directive: string): number[] {
  const counts: number[] = [];
  do {
    const line = stream.peek().line;
    const count = stream.expectCount(`a thread count after .${directive}`);
    if (count <= 0) throw stream.errorAt(line, `.${directive} counts must be positive`);
    counts.push(count);
  } while (counts.length < 3 && stream.eatPunct(','));
  return counts;
}
