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

/**
 * The source's lines, so every error can quote the line it is about. Only where each line starts
 * is kept (one number a line), not a copy of each line: a line's text is cut out when asked for.
 */
export class SourceLines {
  private readonly starts: number[] = [0];
  constructor(private readonly source: string) {
    // Lines end at \r\n, a lone \r or \n, as the lexer counts them.
    for (let index = 0; index < source.length; index++) {
      const code = source.charCodeAt(index);
      if (code === 13 && source.charCodeAt(index + 1) === 10) index++;
      if (code === 10 || code === 13) this.starts.push(index + 1);
    }
  }
  text(line: number): string {
    const start = this.starts[line - 1];
    if (start === undefined) return '';
    let end = this.starts[line] ?? this.source.length + 1;
    // Back over the line break: \n, \r or \r\n.
    end--;
    if (end > start && this.source.charCodeAt(end - 1) === 13) end--;
    return this.source.slice(start, Math.min(end, this.source.length)).trim();
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

/**
 * Reads tokens one at a time in a linear pass (no regexes on the hot path), so a module's tokens
 * never all exist at once: the parser keeps only what it builds from them.
 */
export class Lexer {
  private offset = 0;
  private line = 1;

  constructor(
    private readonly text: string,
    private readonly source: SourceLines,
  ) {}

  /** Where the lexer is, for `restore` (the parser's backtracking over a skipped entry body). */
  save(): { readonly offset: number; readonly line: number } {
    return { offset: this.offset, line: this.line };
  }

  restore(state: { readonly offset: number; readonly line: number }): void {
    this.offset = state.offset;
    this.line = state.line;
  }

  /** The next token; at the end, an `eof` token every time. */
  next(): Token {
    const { text, source } = this;
    const length = text.length;
    let i = this.offset;
    let line = this.line;
    let token: Token | undefined;
    while (token === undefined) {
      if (i >= length) {
        token = { kind: 'eof', text: '', line: Math.max(1, line) };
        break;
      }
      const code = text.charCodeAt(i);
      if (code === 10) {
        line++;
        i++;
      } else if (code === 13) {
        // A lone CR ends a line too; CRLF counts once.
        if (text.charCodeAt(i + 1) !== 10) line++;
        i++;
      } else if (code === 32 || code === 9 || code === 11 || code === 12) {
        i++;
      } else if (code === 47 /* / */ && text.charCodeAt(i + 1) === 47) {
        while (i < length && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 13) i++;
      } else if (code === 47 && text.charCodeAt(i + 1) === 42 /* * */) {
        const end = text.indexOf('*/', i + 2);
        if (end < 0) throw source.error(line, 'unterminated /* comment');
        for (let j = i + 2; j < end; j++) {
          const c = text.charCodeAt(j);
          if (c === 10 || (c === 13 && text.charCodeAt(j + 1) !== 10)) line++;
        }
        i = end + 2;
      } else if (
        code === 46 /* . */ &&
        isIdentStart(text.charCodeAt(i + 1)) &&
        text[i + 1] !== '%'
      ) {
        let j = i + 1;
        while (j < length && isIdentPart(text.charCodeAt(j))) j++;
        token = { kind: 'directive', text: text.slice(i + 1, j), line };
        i = j;
      } else if (isIdentStart(code)) {
        const end = scanWord(text, i);
        token = { kind: 'word', text: text.slice(i, end), line };
        i = end;
      } else if (isDigit(code)) {
        const end = scanNumber(text, i);
        token = { kind: 'number', text: text.slice(i, end), line };
        i = end;
      } else if (code === 34 /* " */) {
        let j = i + 1;
        while (j < length && text.charCodeAt(j) !== 34 && text.charCodeAt(j) !== 10) j++;
        if (text.charCodeAt(j) !== 34) throw source.error(line, 'unterminated string');
        token = { kind: 'string', text: text.slice(i + 1, j), line };
        i = j + 1;
      } else {
        const char = text[i] ?? '';
        if (!PUNCTUATION.has(char)) throw source.error(line, `unexpected character '${char}'`);
        token = { kind: 'punct', text: char, line };
        i++;
      }
    }
    this.offset = i;
    this.line = line;
    return token;
  }
}

/** Every token of `text`, the last one `eof` (for tests; the parser reads a Lexer directly). */
export function tokenize(text: string, source: SourceLines): Token[] {
  const lexer = new Lexer(text, source);
  const tokens: Token[] = [];
  for (;;) {
    const token = lexer.next();
    tokens.push(token);
    if (token.kind === 'eof') return tokens;
  }
}

// Words keep dots (`shfl.sync.bfly.b32`, `%tid.x`) and `::` (`L2::128B`): one token per opcode.
function scanWord(text: string, start: number): number {
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
  return j;
}

// Decimal floats may carry `.digits` and a signed exponent; other numbers are alphanumeric.
function scanNumber(text: string, start: number): number {
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
  return j;
}
