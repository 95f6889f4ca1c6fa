// Instruction operands: registers, immediates, addresses, vectors, symbols and `a|b` pairs.
import type { Operand } from '../ast.js';
import type { Token } from './lexer.js';
import { negateLiteral, parseNumberLiteral, type NumberLiteral } from './numbers.js';
import type { TokenStream } from './token-stream.js';

type AddressBase = { readonly kind: 'register' | 'symbol'; readonly name: string };

const NO_OPERANDS: readonly Operand[] = Object.freeze([]);

/** Operands up to (not including) the terminating `;`, separated by commas. */
export function parseOperands(stream: TokenStream): readonly Operand[] {
  if (stream.atPunct(';') || startsNextStatement(stream)) return NO_OPERANDS;
  const operands: Operand[] = [];
  for (;;) {
    operands.push(parseOperand(stream));
    // A copy of exactly its length: the module keeps millions of these, and `push` over-allocates.
    if (!stream.eatPunct(',')) return operands.slice();
  }
}

// A `;` forgotten at the end of a line: leave the next line alone so the error names this one.
function startsNextStatement(stream: TokenStream): boolean {
  const token = stream.peek();
  const previous = stream.previous();
  if (previous === undefined || token.line === previous.line) return false;
  if (token.kind === 'directive' || token.kind === 'eof') return true;
  if (token.kind === 'punct') return token.text === '}' || token.text === '@';
  return token.kind === 'word' && (token.text.includes('.') || stream.atPunct(':', 1));
}

/** One operand, including a `first|second` pair. */
export function parseOperand(stream: TokenStream): Operand {
  const first = parseSimpleOperand(stream);
  if (!stream.eatPunct('|')) return first;
  const second = parseSimpleOperand(stream);
  return { kind: 'pair', first, second };
}

function parseSimpleOperand(stream: TokenStream): Operand {
  const token = stream.peek();
  if (token.kind === 'word') {
    stream.next();
    const operand = wordOperand(stream, token);
    if (operand.kind === 'symbol' && stream.atPunct('[')) return parseArrayElement(stream, operand);
    return operand;
  }
  if (token.kind === 'number' || stream.atPunct('-')) return parseLiteralOperand(stream);
  if (stream.atPunct('[')) return parseAddress(stream);
  if (stream.atPunct('{')) return parseVector(stream);
  if (stream.atPunct('!')) {
    throw stream.errorAt(token.line, 'negated predicate operands (!p) are not supported');
  }
  throw stream.unexpected('expected an operand');
}

function wordOperand(stream: TokenStream, token: Token): Operand {
  const name = token.text;
  if (name === '_') return SINK;
  if (name.startsWith('%')) {
    if (name.length < 2 || name.includes('::'))
      throw stream.errorAt(token.line, `bad register name '${name}'`);
    return stream.interner.register(name);
  }
  // Plain identifiers never contain dots; a dotted word here is an opcode missing its ';'.
  if (name.includes('.') || name.includes(':')) {
    throw stream.errorAt(token.line, `bad operand '${name}'`);
  }
  return stream.interner.symbol(name);
}

const SINK: Operand = Object.freeze({ kind: 'sink' });

const literalOperand = (literal: NumberLiteral): Operand =>
  literal.kind === 'integer'
    ? { kind: 'integer', value: literal.value }
    : { kind: 'float', bits: literal.bits, width: literal.width };

/** An immediate operand, one object for every repeat of its spelling. */
function parseLiteralOperand(stream: TokenStream): Operand {
  const negative = stream.atPunct('-');
  const spelling = negative ? `-${stream.peek(1).text}` : stream.peek().text;
  const literal = parseSignedLiteral(stream);
  return stream.interner.literal(spelling, () => literalOperand(literal));
}

/** A number token, optionally preceded by `-`. */
export function parseSignedLiteral(stream: TokenStream): NumberLiteral {
  const negative = stream.eatPunct('-');
  const token = stream.peek();
  if (token.kind !== 'number') throw stream.unexpected('expected a number');
  const literal = parseNumberLiteral(token.text);
  if (literal === undefined) throw stream.errorAt(token.line, `bad number literal '${token.text}'`);
  stream.next();
  return negative ? negateLiteral(literal) : literal;
}

function parseInteger(stream: TokenStream, what: string): bigint {
  const line = stream.peek().line;
  const literal = parseSignedLiteral(stream);
  if (literal.kind !== 'integer') throw stream.errorAt(line, `${what} must be an integer`);
  return literal.value;
}

// `[%rd1]`, `[%rd1+16]`, `[%rd1+-4]`, `[%r2-8]`, `[sym]`, `[sym+8]`, `[1024]`.
function parseAddress(stream: TokenStream): Operand {
  const open = stream.next();
  const token = stream.peek();
  let base: AddressBase | undefined;
  let offset = 0n;
  if (token.kind === 'word') {
    const operand = wordOperand(stream, token);
    if (operand.kind !== 'register' && operand.kind !== 'symbol') {
      throw stream.errorAt(token.line, `bad address base '${token.text}'`);
    }
    stream.next();
    base = operand;
    if (stream.eatPunct('+')) offset = parseInteger(stream, 'address offset');
    else if (stream.eatPunct('-')) offset = -parseInteger(stream, 'address offset');
  } else if (token.kind === 'number' || stream.atPunct('-')) {
    offset = parseInteger(stream, 'address');
  } else {
    throw stream.unexpected('expected a register, symbol or integer in address');
  }
  if (!stream.atPunct(']')) {
    throw stream.unexpected(`expected ']' to close the '[' on line ${open.line}`);
  }
  stream.next();
  return base === undefined ? { kind: 'address', offset } : { kind: 'address', base, offset };
}

// `var[%r5]`, `var[%r5+8]`, `var[3]`: an element of an array variable (ptxas rejects `[%r5-8]`).
function parseArrayElement(stream: TokenStream, variable: { readonly name: string }): Operand {
  const open = stream.next();
  const token = stream.peek();
  let register: string | undefined;
  let index = 0n;
  if (token.kind === 'word') {
    const operand = wordOperand(stream, token);
    if (operand.kind !== 'register' && operand.kind !== 'symbol')
      throw stream.errorAt(token.line, `bad array index '${token.text}'`);
    stream.next();
    register = operand.name;
    if (stream.eatPunct('+')) index = parseInteger(stream, 'array index offset');
  } else if (token.kind === 'number') {
    index = parseInteger(stream, 'array index');
  } else {
    throw stream.unexpected(`expected a register or integer index in '${variable.name}[…]'`);
  }
  if (!stream.atPunct(']')) {
    throw stream.unexpected(`expected ']' to close the '[' on line ${open.line}`);
  }
  stream.next();
  const element = register === undefined ? { index } : { register, index };
  return { kind: 'address', base: { kind: 'symbol', name: variable.name }, offset: 0n, element };
}

// `{%f1, %f2, _, %f4}`, `{0, %rs1}`; bare names stay symbols until the body resolves them.
function parseVector(stream: TokenStream): Operand {
  const open = stream.next();
  const elements: Operand[] = [];
  for (;;) {
    const token = stream.peek();
    if (token.kind === 'number' || stream.atPunct('-')) {
      elements.push(parseLiteralOperand(stream));
    } else if (token.kind === 'word') {
      stream.next();
      elements.push(wordOperand(stream, token));
    } else {
      throw stream.unexpected('expected a register, immediate or _ in vector');
    }
    if (stream.eatPunct(',')) continue;
    if (stream.eatPunct('}')) break;
    throw stream.unexpected(`expected ',' or '}' to close the '{' on line ${open.line}`);
  }
  return { kind: 'vector', elements: elements.slice() };
}
