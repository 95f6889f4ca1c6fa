// Module level: `.version`, `.target`, `.address_size`, module variables and `.entry` functions.
import {
  typeBytes,
  type EntryFunction,
  type ParseOptions,
  type PtxModule,
  type SourceLocation,
  type VariableDeclaration,
} from '../ast.js';
import { PtxLimitError, PtxSyntaxError } from '../errors.js';
import { SIMULATOR_LIMITS, overLimit } from '../limits.js';
import {
  countStatement,
  DEVICE_FUNCTIONS_UNSUPPORTED,
  parseBody,
  type ParsedBody,
  type StatementCount,
} from './body.js';
import { parseParam, parseThreadCounts, parseVariables } from './directives.js';
import { Lexer, SourceLines, type Token } from './lexer.js';
import { TokenStream } from './token-stream.js';

type Linkage = 'visible' | 'weak' | 'extern';

class ModuleParser {
  private version: string | undefined;
  private target: string | undefined;
  private addressSize: 32 | 64 | undefined;
  private readonly files = new Map<number, string>();
  private readonly variables: VariableDeclaration[] = [];
  private readonly entries: EntryFunction[] = [];
  private readonly names = { variables: new Set<string>(), entries: new Set<string>() };
  /** Bytes of `.const` and `.global` variables so far, against their limits. */
  private readonly bytes = { const: 0, global: 0 };
  private readonly count: StatementCount = { statements: 0 };
  private globals = 0;

  constructor(
    private readonly stream: TokenStream,
    private readonly lazy: boolean,
  ) {}

  parse(): PtxModule {
    const stream = this.stream;
    while (stream.peek().kind !== 'eof') {
      const token = stream.peek();
      if (token.kind !== 'directive')
        throw stream.unexpected('expected a directive at module scope');
      this.parseTopLevel(token);
    }
    if (this.version === undefined) throw stream.errorAt(1, 'missing .version directive');
    if (this.target === undefined) throw stream.errorAt(1, 'missing .target directive');
    return {
      version: this.version,
      target: this.target,
      // The PTX ISA's default when `.address_size` is omitted.
      addressSize: this.addressSize ?? 32,
      variables: this.variables,
      entries: this.entries,
      files: this.files,
    };
  }

  private location(line: number): SourceLocation {
    return { line, text: this.stream.source.text(line) };
  }

  private parseTopLevel(first: Token): void {
    const stream = this.stream;
    stream.next();
    switch (first.text) {
      case 'version':
        this.parseVersion(first);
        return;
      case 'target':
        this.parseTarget(first);
        return;
      case 'address_size': {
        if (this.addressSize !== undefined)
          throw stream.errorAt(first.line, 'duplicate .address_size');
        const size = stream.expectCount('32 or 64 after .address_size');
        if (size !== 32 && size !== 64)
          throw stream.errorAt(first.line, `bad .address_size ${size}`);
        this.addressSize = size;
        return;
      }
      case 'file': {
        // `.file index "name"[, timestamp, size]` (nvcc -lineinfo), named by `.loc`.
        const index = stream.expectCount('a file index after .file');
        const name = stream.next();
        if (name.kind !== 'string')
          throw stream.errorAt(name.line, 'expected a file name after .file');
        while (stream.peek().line === name.line && stream.eatPunct(','))
          stream.expectCount('a number');
        this.files.set(index, name.text);
        return;
      }
      case 'section': {
        // Debug sections (`.section .debug_str { … }`) hold no code: skipped, braces balanced.
        stream.next();
        stream.skipBlock(stream.expectPunct('{', "'{' after .section"));
        return;
      }
      case 'visible':
      case 'weak':
      case 'extern':
        this.parseDeclaration(first, first.text);
        return;
      default:
        // Without linkage the directive just consumed is the declaration keyword itself.
        this.parseDeclarationKeyword(first, first, undefined);
    }
  }

  private parseVersion(token: Token): void {
    const stream = this.stream;
    if (this.version !== undefined) throw stream.errorAt(token.line, 'duplicate .version');
    const value = stream.peek();
    if (value.kind !== 'number' || !/^[0-9]+\.[0-9]+$/.test(value.text)) {
      throw stream.unexpected('expected a version like 7.0 after .version');
    }
    stream.next();
    this.version = value.text;
  }

  // `.target sm_80, texmode_independent`: the first `sm_` name is the architecture.
  private parseTarget(token: Token): void {
    const stream = this.stream;
    if (this.target !== undefined) throw stream.errorAt(token.line, 'duplicate .target');
    const names: string[] = [];
    do {
      names.push(stream.expectWord('a target name after .target').text);
    } while (stream.eatPunct(','));
    const sm = names.find((name) => /^sm_[0-9]+[a-z]?$/.test(name));
    if (sm === undefined) throw stream.errorAt(token.line, 'no sm_XX architecture in .target');
    this.target = sm;
  }

  private parseDeclaration(first: Token, linkage: Linkage): void {
    const keyword = this.stream.expectDirective(`.entry or a variable after .${linkage}`);
    this.parseDeclarationKeyword(first, keyword, linkage);
  }

  private parseDeclarationKeyword(
    first: Token,
    keyword: Token,
    linkage: Linkage | undefined,
  ): void {
    const stream = this.stream;
    const location = this.location(first.line);
    switch (keyword.text) {
      case 'entry':
        countStatement(stream, this.count, first.line);
        this.entries.push(this.parseEntry(location, linkage));
        return;
      case 'func':
        if (!this.lazy) throw stream.errorAt(keyword.line, DEVICE_FUNCTIONS_UNSUPPORTED);
        this.skipFunction();
        return;
      case 'global':
      case 'const':
      case 'shared': {
        if (linkage === 'extern' && keyword.text !== 'shared') {
          throw stream.errorAt(
            keyword.line,
            `.extern .${keyword.text} variables are not supported`,
          );
        }
        const external = linkage === 'extern';
        for (const variable of parseVariables(stream, keyword.text, { external, location })) {
          if (this.names.variables.has(variable.name)) {
            throw stream.errorAt(keyword.line, `variable '${variable.name}' redeclared`);
          }
          this.names.variables.add(variable.name);
          countStatement(stream, this.count, keyword.line);
          this.checkModuleBytes(variable);
          this.variables.push(variable);
        }
        return;
      }
      default:
        throw stream.errorAt(keyword.line, `unknown or unsupported directive '.${keyword.text}'`);
    }
  }

  // What module variables the simulator allocates is bounded: `.const` as ptxas bounds it, and
  // their number, as each takes a 4 GiB slot of the simulated address space below shared memory.
  private checkModuleBytes(variable: VariableDeclaration): void {
    const space = variable.space;
    if (space !== 'const' && space !== 'global') return;
    if (++this.globals > SIMULATOR_LIMITS.globalVariables)
      throw this.stream.limitAt(
        variable.location.line,
        `a module of more than ${SIMULATOR_LIMITS.globalVariables} .global and .const variables is ${overLimit('globalVariables')}`,
        'globalVariables',
      );
    this.bytes[space] += typeBytes(variable.type) * (variable.length ?? 1);
    const limit = space === 'const' ? 'constBytes' : 'globalVariableBytes';
    if (this.bytes[space] > SIMULATOR_LIMITS[limit])
      throw this.stream.limitAt(
        variable.location.line,
        `the module's .${space} variables take ${this.bytes[space]} bytes, ${overLimit(limit, ' bytes')}`,
        limit,
      );
  }

  // `.entry NAME ( params ) [.reqntid …] [.maxntid …] [.minnctapersm N] [.maxnreg N] { body }`.
  private parseEntry(location: SourceLocation, linkage: Linkage | undefined): EntryFunction {
    const stream = this.stream;
    const nameToken = stream.expectWord('an entry name after .entry');
    const name = nameToken.text;
    if (name.startsWith('%') || name.includes('.') || name.includes(':')) {
      throw stream.errorAt(nameToken.line, `bad entry name '${name}'`);
    }
    if (this.names.entries.has(name)) {
      throw stream.errorAt(nameToken.line, `entry '${name}' defined twice`);
    }
    this.names.entries.add(name);
    const params: VariableDeclaration[] = [];
    const paramNames = new Set<string>();
    if (stream.atPunct('(')) {
      const open = stream.next();
      if (!stream.eatPunct(')')) {
        for (;;) {
          const param = stream.peek();
          if (!stream.atDirective('param')) throw stream.unexpected('expected .param');
          stream.next();
          const declaration = parseParam(stream, this.location(param.line));
          if (paramNames.has(declaration.name)) {
            throw stream.errorAt(param.line, `parameter '${declaration.name}' declared twice`);
          }
          paramNames.add(declaration.name);
          countStatement(stream, this.count, param.line);
          params.push(declaration);
          if (stream.eatPunct(',')) continue;
          if (stream.eatPunct(')')) break;
          throw stream.unexpected(`expected ',' or ')' to close the '(' on line ${open.line}`);
        }
      }
    }
    let requiredThreads: number[] | undefined;
    let maxThreads: number[] | undefined;
    let unsupported: EntryFunction['unsupported'];
    for (;;) {
      const token = stream.peek();
      if (token.kind !== 'directive') break;
      stream.next();
      if (token.text === 'reqntid') requiredThreads = parseThreadCounts(stream, token.text);
      else if (token.text === 'maxntid') maxThreads = parseThreadCounts(stream, token.text);
      else if (token.text === 'minnctapersm' || token.text === 'maxnreg')
        stream.expectCount(`a number after .${token.text}`);
      else {
        const reason = `unknown or unsupported directive '.${token.text}' on entry '${name}'`;
        if (!this.lazy) throw stream.errorAt(token.line, reason);
        // `.explicitcluster`, `.reqnctapercluster 2, 1, 1`: kept for a launch of this entry.
        unsupported ??= { line: token.line, text: stream.source.text(token.line), reason };
        while (stream.peek().kind !== 'directive' && !stream.atPunct('{')) {
          if (stream.peek().kind === 'eof') throw stream.errorAt(token.line, reason);
          stream.next();
        }
      }
    }
    if (!stream.atPunct('{')) {
      throw stream.errorAt(nameToken.line, `.entry '${name}' has no body`);
    }
    const open = stream.next();
    const { parsed, unsupported: problem } = this.parseEntryBody(open, unsupported);
    return {
      name,
      visible: linkage === 'visible',
      params,
      registers: parsed.registers,
      variables: parsed.variables,
      ...(requiredThreads === undefined ? {} : { requiredThreads }),
      ...(maxThreads === undefined ? {} : { maxThreads }),
      body: parsed.body,
      location,
      ...(problem === undefined ? {} : { unsupported: problem }),
    };
  }

  // Lazily, a body with a construct the simulator lacks is skipped and the problem kept.
  private parseEntryBody(
    open: Token,
    unsupported: EntryFunction['unsupported'],
  ): { parsed: ParsedBody; unsupported: EntryFunction['unsupported'] } {
    const stream = this.stream;
    const empty: ParsedBody = { registers: [], variables: [], body: [] };
    if (unsupported !== undefined) {
      stream.skipBlock(open);
      return { parsed: empty, unsupported };
    }
    const start = stream.position;
    try {
      return { parsed: parseBody(stream, open, this.count), unsupported };
    } catch (error) {
      // A limit is the module's, not the entry's: refused at once.
      if (!this.lazy || !(error instanceof PtxSyntaxError) || error instanceof PtxLimitError)
        throw error;
      stream.seek(start);
      stream.skipBlock(open);
      return {
        parsed: empty,
        unsupported: { line: error.line, text: error.text, reason: error.reason },
      };
    }
  }

  // `.func [(ret)] name (params) [directives] { body }` or a prototype ending in `;`: not run.
  private skipFunction(): void {
    const stream = this.stream;
    for (;;) {
      const token = stream.next();
      if (token.kind === 'eof') throw stream.errorAt(token.line, `.func is never closed`);
      if (token.kind === 'punct' && token.text === ';') return;
      if (token.kind === 'punct' && token.text === '{') {
        stream.skipBlock(token);
        return;
      }
    }
  }
}

/**
 * Parses a PTX module; every construct it cannot represent is a PtxSyntaxError naming its line,
 * unless `lazyEntries` keeps errors inside entry bodies for the entry's launch. Text past one of
 * SIMULATOR_LIMITS (size, statements, nesting, declarations) is a PtxLimitError either way.
 */
export function parsePtx(text: string, options: ParseOptions = {}): PtxModule {
  if (text.length > SIMULATOR_LIMITS.moduleChars)
    throw new PtxLimitError(
      0,
      '',
      `the module has ${text.length} characters, ${overLimit('moduleChars', ' characters')}`,
      'moduleChars',
    );
  const source = new SourceLines(text);
  const stream = new TokenStream(new Lexer(text, source), source);
  return new ModuleParser(stream, options.lazyEntries === true).parse();
}
