// Splits PTX text into tokens with line numbers; comments and whitespace are dropped here.
import { PtxSyntaxError } from '../errors.js';

export type TokenKind =
  /** `.reg`, `.u32`, `.align`: the text after the dot. */
  | 'directive'
  /** Opcodes with their modifiers (`ld.global.f32`), registers (`%r1`, `%tid.x`), labels, names. */
  | 'word'
  /** Any literal starting with a digit (`12`, `0x1F`, `0f3F800000`, `1.5e-3`); parser checks it. */
  | 'number'
  /** A double-quoted string (only `.pragma` takes one). */
  | 'string'
  /** One of `, ; : { } [ ] ( ) < > @ ! + - | =`. */
  | 'punct'
  | 'eof';

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** 1-based line of the token's first character. */
  readonly line: number;
}

/** The source split into lines, so every error can quote the line it is about. */
export class SourceLines {
  private readonly lines: readonly string[];
  constructor(text: string) {
    this.lines = text.split(/\r\n|\r|\n/);
  }
  text(line: number): string {
    return (this.lines[line - 1] ?? '').trim();
  }
  error(line: number, reason: string): PtxSyntaxError {
    return new PtxSyntaxError(line, this.text(line), reason);
  }
}

const PUNCTUATION = new Set(',;:{}[]()<>@!+-|=');
// `0x` hex, `0b` binary, `0f`/`0d` float bits: the rest of such a number is alphanumeric.
const RADIX_PREFIXES = new Set('xXfFdDbB');

function isIdentStart(code: number): boolean {
  // A-Z a-z _ $ %
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    code === 95 ||
    code === 36 ||
    code === 37
  );
}

function isIdentPart(code: number): boolean {
  // A-Z a-z 0-9 _ $
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    (code >= 48 && code <= 57) ||
    code === 95 ||
    code === 36
  );
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Tokenizes the whole module in one linear pass (no regexes on the hot path). */
export function tokenize(text: string, source: SourceLines): Token[] {
  const tokens: Token[] = [];
  const length = text.length;
  let line = 1;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    const char = text[i] ?? '';
    if (code === 10) {
      line++;
      i++;
      continue;
    }
    if (code === 13) {
      // A lone CR ends a line too; CRLF counts once.
      if (text.charCodeAt(i + 1) !== 10) line++;
      i++;
      continue;
    }
    if (code === 32 || code === 9 || code === 11 || code === 12) {
      i++;
      continue;
    }
    if (char === '/' && text[i + 1] === '/') {
      while (i < length && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 13) i++;
      continue;
    }
    if (char === '/' && text[i + 1] === '*') {
      const startLine = line;
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw source.error(startLine, 'unterminated /* comment');
      for (let j = i + 2; j < end; j++) {
        const c = text.charCodeAt(j);
        if (c === 10 || (c === 13 && text.charCodeAt(j + 1) !== 10)) line++;
      }
      i = end + 2;
      continue;
    }
    if (char === '.' && isIdentStart(text.charCodeAt(i + 1)) && text[i + 1] !== '%') {
      let j = i + 1;
      while (j < length && isIdentPart(text.charCodeAt(j))) j++;
      tokens.push({ kind: 'directive', text: text.slice(i + 1, j), line });
      i = j;
      continue;
    }
    if (isIdentStart(code)) {
      i = scanWord(text, i, line, tokens);
      continue;
    }
    if (isDigit(code)) {
      i = scanNumber(text, i, line, tokens);
      continue;
    }
    if (char === '"') {
      let j = i + 1;
      while (j < length && text[j] !== '"' && text.charCodeAt(j) !== 10) j++;
      if (text[j] !== '"') throw source.error(line, 'unterminated string');
      tokens.push({ kind: 'string', text: text.slice(i + 1, j), line });
      i = j + 1;
      continue;
    }
    if (PUNCTUATION.has(char)) {
      tokens.push({ kind: 'punct', text: char, line });
      i++;
      continue;
    }
    throw source.error(line, `unexpected character '${char}'`);
  }
  tokens.push({ kind: 'eof', text: '', line: Math.max(1, line) });
  return tokens;
}

// Words keep dots (`shfl.sync.bfly.b32`, `%tid.x`) and `::` (`L2::128B`): one token per opcode.
function scanWord(text: string, start: number, line: number, tokens: Token[]): number {
  let j = start + 1;
  for (;;) {
    const code = text.charCodeAt(j);
    if (isIdentPart(code)) {
      j++;
    } else if (code === 46 /* . */ && isIdentPart(text.charCodeAt(j + 1))) {
      j += 2;
    } else if (code === 58 /* : */ && text[j + 1] === ':' && isIdentPart(text.charCodeAt(j + 2))) {
      j += 3;
    } else {
      break;
    }
  }
  tokens.push({ kind: 'word', text: text.slice(start, j), line });
  return j;
}

// Decimal floats may carry `.digits` and a signed exponent; other numbers are alphanumeric.
function scanNumber(text: string, start: number, line: number, tokens: Token[]): number {
  let j = start;
  const prefixed = text[start] === '0' && RADIX_PREFIXES.has(text[start + 1] ?? '');
  if (prefixed) {
    j += 2;
  } else {
    while (isDigit(text.charCodeAt(j))) j++;
    if (text[j] === '.' && isDigit(text.charCodeAt(j + 1))) {
      j++;
      while (isDigit(text.charCodeAt(j))) j++;
    }
    const exponent = text[j];
    if (exponent === 'e' || exponent === 'E') {
      const sign = text[j + 1];
      const digitAt = sign === '+' || sign === '-' ? j + 2 : j + 1;
      if (isDigit(text.charCodeAt(digitAt))) {
        j = digitAt;
        while (isDigit(text.charCodeAt(j))) j++;
      }
    }
  }
  // Trailing letters (`U`, hex digits, junk) stay in the token; the parser validates it whole.
  while (isIdentPart(text.charCodeAt(j))) j++;
  tokens.push({ kind: 'number', text: text.slice(start, j), line });
  return j;
}
