// A parser for the WGSL that Forge emits (not all of WGSL): module-scope buffers, a uniform params
// struct, workgroup arrays, helper functions of one `return`, and compute entry points whose bodies
// hold declarations, assignments, `if`/`else`, `for` loops and calls such as workgroupBarrier().

/** A WGSL type as written, e.g. `u32`, `vec2<f32>`, `array<u32, 256>`, `ForgeParams`. */
export interface TypeNode {
  readonly name: string;
  readonly args: readonly (TypeNode | number)[];
}

export type ExprNode =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'unary'; readonly operator: string; readonly operand: ExprNode }
  | {
      readonly kind: 'binary';
      readonly operator: string;
      readonly left: ExprNode;
      readonly right: ExprNode;
    }
  | {
      readonly kind: 'call';
      readonly callee: string;
      readonly template: TypeNode | undefined;
      readonly args: readonly ExprNode[];
    }
  | { readonly kind: 'index'; readonly base: ExprNode; readonly index: ExprNode }
  | { readonly kind: 'member'; readonly base: ExprNode; readonly member: string };

export type StmtNode =
  | {
      readonly kind: 'declare';
      readonly mutable: boolean;
      readonly name: string;
      readonly type: TypeNode | undefined;
      readonly value: ExprNode;
    }
  | { readonly kind: 'assign'; readonly target: ExprNode; readonly value: ExprNode }
  | {
      readonly kind: 'if';
      readonly condition: ExprNode;
      readonly then: readonly StmtNode[];
      readonly else: readonly StmtNode[];
    }
  | {
      readonly kind: 'for';
      readonly init: StmtNode;
      readonly condition: ExprNode;
      readonly update: StmtNode;
      readonly body: readonly StmtNode[];
    }
  | { readonly kind: 'call'; readonly call: ExprNode }
  | { readonly kind: 'return'; readonly value: ExprNode };

export interface ParameterNode {
  readonly name: string;
  readonly type: TypeNode;
  readonly builtin: string | undefined;
}

export interface FunctionNode {
  readonly name: string;
  readonly parameters: readonly ParameterNode[];
  readonly returnType: TypeNode | undefined;
  readonly body: readonly StmtNode[];
  /** `@workgroup_size(n)` of a compute entry point. */
  readonly workgroupSize: number | undefined;
}

export interface GlobalNode {
  readonly name: string;
  /** `storage`, `uniform` or `workgroup`. */
  readonly space: string;
  readonly access: string;
  readonly type: TypeNode;
  readonly binding: number | undefined;
}

export interface ModuleNode {
  readonly directives: readonly string[];
  readonly structs: ReadonlyMap<string, readonly { name: string; type: TypeNode }[]>;
  readonly globals: readonly GlobalNode[];
  readonly functions: ReadonlyMap<string, FunctionNode>;
}

/** WGSL the interpreter cannot take, with the line it was on. */
export class WgslSyntaxError extends Error {
  override readonly name = 'WgslSyntaxError';
}

interface Token {
  readonly text: string;
  readonly line: number;
}

const TOKEN =
  /\s+|\/\/[^\n]*|(0x[0-9a-fA-F]+[iu]?|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?[iufh]?|[A-Za-z_][A-Za-z0-9_]*|<<|>>|<=|>=|==|!=|&&|\|\||->|[(){}[\]<>,;:.=+\-*/%&|^!~@])/y;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (match === null)
      throw new WgslSyntaxError(`line ${line}: unexpected character '${source[start]}'`);
    if (match[1] !== undefined) tokens.push({ text: match[1], line });
    line += match[0].split('\n').length - 1;
  }
  return tokens;
}

// Binding power of each binary operator, loosest first.
const PRECEDENCE: Readonly<Record<string, number>> = {
  '||': 1,
  '&&': 2,
  '|': 3,
  '^': 4,
  '&': 5,
  '==': 6,
  '!=': 6,
  '<': 7,
  '>': 7,
  '<=': 7,
  '>=': 7,
  '<<': 8,
  '>>': 8,
  '+': 9,
  '-': 9,
  '*': 10,
  '/': 10,
  '%': 10,
};
const TEMPLATED_CALLS = new Set(['bitcast', 'vec2', 'vec3', 'vec4', 'array']);

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): string | undefined {
    return this.tokens[this.position + offset]?.text;
  }

  private fail(message: string): never {
    const token = this.tokens[Math.min(this.position, this.tokens.length - 1)];
    throw new WgslSyntaxError(`line ${token?.line ?? 0}: ${message}, at '${this.peek() ?? 'end'}'`);
  }

  private next(): string {
    const text = this.peek();
    if (text === undefined) this.fail('unexpected end of source');
    this.position += 1;
    return text;
  }

  private expect(text: string): void {
    if (this.peek() !== text) this.fail(`expected '${text}'`);
    this.position += 1;
  }

  private accept(text: string): boolean {
    if (this.peek() !== text) return false;
    this.position += 1;
    return true;
  }

  private identifier(): string {
    const text = this.next();
    if (!/^[A-Za-z_]/.test(text)) this.fail(`expected an identifier, got '${text}'`);
    return text;
  }

  // A `>>` closing two templates at once counts as two `>`.
  private closeTemplate(): void {
    if (this.peek() === '>>') {
      this.tokens[this.position] = { ...(this.tokens[this.position] as Token), text: '>' };
      return;
    }
    this.expect('>');
  }

  type(): TypeNode {
    const name = this.identifier();
    const args: (TypeNode | number)[] = [];
    if (this.accept('<')) {
      do {
        args.push(
          /^[0-9]/.test(this.peek() ?? '') ? Number.parseInt(this.next(), 10) : this.type(),
        );
      } while (this.accept(','));
      this.closeTemplate();
    }
    return { name, args };
  }

  private attributes(): Map<string, string[]> {
    const found = new Map<string, string[]>();
    while (this.accept('@')) {
      const name = this.identifier();
      const args: string[] = [];
      if (this.accept('(')) {
        while (!this.accept(')')) args.push(this.next());
      }
      found.set(
        name,
        args.filter((arg) => arg !== ','),
      );
    }
    return found;
  }

  module(): ModuleNode {
    const directives: string[] = [];
    const structs = new Map<string, { name: string; type: TypeNode }[]>();
    const globals: GlobalNode[] = [];
    const functions = new Map<string, FunctionNode>();
    while (this.peek() !== undefined) {
      const attributes = this.attributes();
      const keyword = this.next();
      if (keyword === 'enable' || keyword === 'requires') {
        directives.push(this.identifier());
        this.expect(';');
      } else if (keyword === 'struct') {
        const name = this.identifier();
        const members: { name: string; type: TypeNode }[] = [];
        this.expect('{');
        while (!this.accept('}')) {
          const member = this.identifier();
          this.expect(':');
          members.push({ name: member, type: this.type() });
          this.accept(',');
        }
        structs.set(name, members);
      } else if (keyword === 'var') {
        const qualifiers: string[] = [];
        if (this.accept('<')) {
          do qualifiers.push(this.identifier());
          while (this.accept(','));
          this.expect('>');
        }
        const name = this.identifier();
        this.expect(':');
        const type = this.type();
        this.expect(';');
        const binding = attributes.get('binding')?.[0];
        globals.push({
          name,
          space: qualifiers[0] ?? 'private',
          access: qualifiers[1] ?? 'read',
          type,
          binding: binding === undefined ? undefined : Number.parseInt(binding, 10),
        });
      } else if (keyword === 'fn') {
        const [size, ...others] = attributes.get('workgroup_size') ?? [];
        if (others.some((other) => other !== '1'))
          this.fail('only 1-D workgroups are supported (@workgroup_size(x))');
        const node = this.function(size === undefined ? undefined : Number.parseInt(size, 10));
        functions.set(node.name, node);
      } else {
        this.fail(`unsupported module-scope '${keyword}'`);
      }
    }
    return { directives, structs, globals, functions };
  }

  private function(workgroupSize: number | undefined): FunctionNode {
    const name = this.identifier();
    const parameters: ParameterNode[] = [];
    this.expect('(');
    while (!this.accept(')')) {
      const builtin = this.attributes().get('builtin')?.[0];
      const parameter = this.identifier();
      this.expect(':');
      parameters.push({ name: parameter, type: this.type(), builtin });
      this.accept(',');
    }
    const returnType = this.accept('->') ? this.type() : undefined;
    return { name, parameters, returnType, body: this.block(), workgroupSize };
  }

  private block(): StmtNode[] {
    this.expect('{');
    const statements: StmtNode[] = [];
    while (!this.accept('}')) statements.push(this.statement(true));
    return statements;
  }

  private statement(terminated: boolean): StmtNode {
    const end = (node: StmtNode): StmtNode => {
      if (terminated) this.expect(';');
      return node;
    };
    const keyword = this.peek();
    if (keyword === 'var' || keyword === 'let') {
      this.position += 1;
      const name = this.identifier();
      const type = this.accept(':') ? this.type() : undefined;
      this.expect('=');
      return end({
        kind: 'declare',
        mutable: keyword === 'var',
        name,
        type,
        value: this.expression(),
      });
    }
    if (keyword === 'if') {
      this.position += 1;
      const condition = this.expression();
      const then = this.block();
      let otherwise: StmtNode[] = [];
      if (this.accept('else'))
        otherwise = this.peek() === 'if' ? [this.statement(false)] : this.block();
      return { kind: 'if', condition, then, else: otherwise };
    }
    if (keyword === 'for') {
      this.position += 1;
      this.expect('(');
      const init = this.statement(false);
      this.expect(';');
      const condition = this.expression();
      this.expect(';');
      const update = this.statement(false);
      this.expect(')');
      return { kind: 'for', init, condition, update, body: this.block() };
    }
    if (keyword === 'return') {
      this.position += 1;
      return end({ kind: 'return', value: this.expression() });
    }
    const target = this.expression();
    if (this.accept('=')) return end({ kind: 'assign', target, value: this.expression() });
    if (target.kind !== 'call') this.fail('expected an assignment or a call');
    return end({ kind: 'call', call: target });
  }

  expression(minimum = 1): ExprNode {
    let left = this.unary();
    for (;;) {
      const operator = this.peek() ?? '';
      const power = PRECEDENCE[operator];
      if (power === undefined || power < minimum) return left;
      this.position += 1;
      left = { kind: 'binary', operator, left, right: this.expression(power + 1) };
    }
  }

  private unary(): ExprNode {
    const operator = this.peek();
    if (operator === '-' || operator === '!' || operator === '~') {
      this.position += 1;
      return { kind: 'unary', operator, operand: this.unary() };
    }
    let node = this.primary();
    for (;;) {
      if (this.accept('[')) {
        node = { kind: 'index', base: node, index: this.expression() };
        this.expect(']');
      } else if (this.accept('.')) {
        node = { kind: 'member', base: node, member: this.identifier() };
      } else {
        return node;
      }
    }
  }

  private primary(): ExprNode {
    if (this.accept('(')) {
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    const text = this.next();
    if (/^[0-9]/.test(text)) return { kind: 'literal', text };
    if (text === 'true' || text === 'false') return { kind: 'literal', text };
    if (!/^[A-Za-z_]/.test(text)) this.fail(`unexpected '${text}'`);
    let template: TypeNode | undefined;
    if (TEMPLATED_CALLS.has(text) && this.accept('<')) {
      template = this.type();
      this.closeTemplate();
    }
    if (!this.accept('(')) return { kind: 'name', name: text };
    const args: ExprNode[] = [];
    while (!this.accept(')')) {
      args.push(this.expression());
      this.accept(',');
    }
    return { kind: 'call', callee: text, template, args };
  }
}

/** Parses a WGSL module as Forge writes it; anything else is a WgslSyntaxError naming the line. */
export function parseWgsl(source: string): ModuleNode {
  return new Parser(tokenize(source)).module();
}

/** A type as WGSL spells it, e.g. `vec2<f32>`, for messages and type comparisons. */
export function typeText(type: TypeNode): string {
  return type.args.length === 0
    ? type.name
    : `${type.name}<${type.args.map((arg) => (typeof arg === 'number' ? String(arg) : typeText(arg))).join(', ')}>`;
}
