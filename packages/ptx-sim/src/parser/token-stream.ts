// A cursor over the lexer's tokens with the error helpers every part of the parser shares.
import { PtxLimitError, type PtxSyntaxError } from '../errors.js';
import type { SimulatorLimit } from '../limits.js';
import { Interner } from './intern.js';
import type { Lexer, SourceLines, Token } from './lexer.js';

/** Where a TokenStream stands: the lexer's place and the tokens it has already read ahead. */
export interface StreamPosition {
  readonly lexer: ReturnType<Lexer['save']>;
  readonly first: Token | undefined;
  readonly second: Token | undefined;
  readonly last: Token | undefined;
}

/** A cursor over the lexer's tokens (two read ahead) with the error helpers the parser shares. */
export class TokenStream {
  /** The next token and the one after, once read from the lexer (the parser looks 1 ahead). */
  private first: Token | undefined;
  private second: Token | undefined;
  private last: Token | undefined;
  /** The module's shared opcode spellings and operands. */
  readonly interner = new Interner();

  constructor(
    private readonly lexer: Lexer,
    readonly source: SourceLines,
  ) {}

  /** The next token (`ahead` 0) or the one after it (1). */
  peek(ahead: 0 | 1 = 0): Token {
    const first = (this.first ??= this.lexer.next());
    if (ahead === 0) return first;
    // Past the end the lexer keeps answering eof.
    return (this.second ??= first.kind === 'eof' ? first : this.lexer.next());
  }

  /** Where the cursor is, for `seek` back to it. */
  get position(): StreamPosition {
    const { first, second, last } = this;
    return { lexer: this.lexer.save(), first, second, last };
  }

  seek(position: StreamPosition): void {
    this.lexer.restore(position.lexer);
    ({ first: this.first, second: this.second, last: this.last } = position);
  }

  /** Skips through the `}` matching an already consumed `{` (nested braces balanced). */
  skipBlock(open: Token): void {
    for (let depth = 1; depth > 0;) {
      const token = this.next();
      if (token.kind === 'eof') throw this.errorAt(open.line, `'{' opened here is never closed`);
      if (token.kind === 'punct' && token.text === '{') depth++;
      if (token.kind === 'punct' && token.text === '}') depth--;
    }
  }

  next(): Token {
    const token = this.peek();
    if (token.kind !== 'eof') {
      this.first = this.second;
      this.second = undefined;
      this.last = token;
    }
    return token;
  }

  /** The token before the cursor (for "missing ';'" errors, which belong to the previous line). */
  previous(): Token | undefined {
    return this.last;
  }

  atPunct(text: string, ahead: 0 | 1 = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === 'punct' && token.text === text;
  }

  atDirective(text: string): boolean {
    const token = this.peek();
    return token.kind === 'directive' && token.text === text;
  }

  /** Consumes the punctuation if it is next. */
  eatPunct(text: string): boolean {
    if (!this.atPunct(text)) return false;
    this.next();
    return true;
  }

  expectPunct(text: string, what: string): Token {
    if (this.atPunct(text)) return this.next();
    throw this.unexpected(`expected '${text}' ${what}`);
  }

  expectWord(what: string): Token {
    const token = this.peek();
    if (token.kind === 'word') return this.next();
    throw this.unexpected(`expected ${what}`);
  }

  expectDirective(what: string): Token {
    const token = this.peek();
    if (token.kind === 'directive') return this.next();
    throw this.unexpected(`expected ${what}`);
  }

  /** A non-negative integer token (counts, alignments, sizes), in decimal/hex/octal/binary. */
  expectCount(what: string): number {
    const token = this.peek();
    const value = token.kind === 'number' ? parseCount(token.text) : undefined;
    if (value === undefined) throw this.unexpected(`expected ${what}`);
    this.next();
    return value;
  }

  /**
   * Ends a statement with `;`. When the next token sits on a later line, the statement was not
   * terminated and the error names the statement's line rather than the next one's.
   */
  expectSemicolon(what: string): void {
    if (this.eatPunct(';')) return;
    const last = this.previous();
    const token = this.peek();
    if (last !== undefined && token.line > last.line) {
      throw this.source.error(last.line, `unterminated ${what} (missing ';')`);
    }
    throw this.unexpected(`expected ';' after ${what}`);
  }

  /** An error at the next token, quoting it. */
  unexpected(reason: string): PtxSyntaxError {
    const token = this.peek();
    const found = token.kind === 'eof' ? 'end of input' : `'${describe(token)}'`;
    return this.source.error(token.line, `${reason}, found ${found}`);
  }

  errorAt(line: number, reason: string): PtxSyntaxError {
    return this.source.error(line, reason);
  }

  /** The text went past one of SIMULATOR_LIMITS at this line. */
  limitAt(line: number, reason: string, limit: SimulatorLimit): PtxLimitError {
    return new PtxLimitError(line, this.source.text(line), reason, limit);
  }
}

function describe(token: Token): string {
  if (token.kind === 'directive') return `.${token.text}`;
  if (token.kind === 'string') return `"${token.text}"`;
  return token.text;
}

function parseCount(text: string): number | undefined {
  let value: number;
  if (/^[1-9][0-9]*$/.test(text) || text === '0') value = Number(text);
  else if (/^0[xX][0-9a-fA-F]+$/.test(text)) value = Number.parseInt(text.slice(2), 16);
  else if (/^0[bB][01]+$/.test(text)) value = Number.parseInt(text.slice(2), 2);
  else if (/^0[0-7]+$/.test(text)) value = Number.parseInt(text.slice(1), 8);
  else return undefined;
  return Number.isSafeInteger(value) ? value : undefined;
}
