import type { BinaryOp, Expr, Stmt } from './body.js';
import { ownField } from './json-shape.js';
import { assertNever, isBinaryExpr, isUnaryExpr, isWordExpr } from './ops.js';
import { takeSnapshot } from './snapshot.js';
import type { KernelSpec, LaunchSpec } from './spec.js';

const INFIX: Readonly<Record<BinaryOp, string>> = {
  add: '+', sub: '-', mul: '*', div: '/', rem: '%', and: '&', or: '|', xor: '^', shl: '<<', shr: '>>',
  eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=', min: '', max: '',
}; // prettier-ignore

/** Shows an expression as compact text: `fma(x[i], scale, bias)`. */
export function printExpr(expression: Expr): string {
  switch (expression.op) {
    case 'const':
      return typeof expression.value === 'boolean'
        ? String(expression.value)
        : `${expression.value}${expression.type}`;
    case 'var':
    case 'param':
      return expression.name;
    case 'schedule':
      return `schedule.${expression.name}`;
    case 'builtin': {
      const axis = ownField(expression, 'axis');
      return axis === undefined ? expression.name : `${expression.name}.${axis}`;
    }
    case 'load':
      return `${expression.memory}[${printExpr(expression.args[0])}]`;
    case 'unpack_half':
      return `unpack_half.${expression.half === 0 ? 'lo' : 'hi'}(${printExpr(expression.args[0])})`;
    case 'convert':
    case 'bitcast':
      return `${expression.op}<${expression.type}>(${printExpr(expression.args[0])})`;
    case 'fma':
    case 'pack_half':
    case 'select':
      return `${expression.op}(${expression.args.map(printExpr).join(', ')})`;
    default: {
      if (isWordExpr(expression)) return `${expression.op}(${expression.args.map(printExpr).join(', ')})`; // prettier-ignore
      if (isUnaryExpr(expression)) return `${expression.op}(${printExpr(expression.args[0])})`;
      if (isBinaryExpr(expression)) {
        const [left, right] = expression.args.map(printExpr);
        const infix = INFIX[expression.op];
        // min and max have no infix form; they print as calls.
        return infix === '' ? `${expression.op}(${left}, ${right})` : `(${left} ${infix} ${right})`;
      }
      return assertNever(expression, 'expression op');
    }
  }
}

/**
 * The first line printBody shows for a statement: a block statement's header, without printing its
 * blocks (renderers comment every statement, so printing whole bodies there would be quadratic).
 */
export function printStatementHeader(statement: Stmt): string {
  const shallow: Stmt =
    statement.op === 'if' ? { ...statement, then: [], else: [] }
    : statement.op === 'for' ? { ...statement, body: [] }
    : statement; // prettier-ignore
  return printBody([shallow])[0] ?? statement.op;
}

/** Shows statements one per line, nested blocks indented by two spaces. */
export function printBody(body: readonly Stmt[], indent = ''): string[] {
  const lines: string[] = [];
  appendBody(body, indent, lines);
  return lines;
}

/**
 * Appends printBody's lines for `body` to `lines`; with `starts`, also the 1-based line (in
 * `lines`) where each statement begins, in the order a pre-order walk meets them.
 */
/** `, at most N registers` for a launch that caps them (PTX's `.maxnreg`), else nothing. */
const registerCap = (launch: LaunchSpec): string => {
  const cap = ownField(launch, 'maxRegisters');
  return cap === undefined ? '' : `, at most ${cap} registers`;
};

function appendBody(
  body: readonly Stmt[],
  indent: string,
  lines: string[],
  starts?: number[],
): void {
  const inner = `${indent}  `;
  for (const statement of body) {
    starts?.push(lines.length + 1);
    switch (statement.op) {
      case 'let':
        lines.push(
          `${indent}let ${statement.name}: ${statement.type} = ${printExpr(statement.value)}`,
        );
        break;
      case 'assign':
        lines.push(`${indent}${statement.name} = ${printExpr(statement.value)}`);
        break;
      case 'store':
        lines.push(
          `${indent}${statement.memory}[${printExpr(statement.index)}] = ${printExpr(statement.value)}`,
        );
        break;
      case 'if':
        lines.push(`${indent}if ${printExpr(statement.condition)} {`);
        appendBody(statement.then, inner, lines, starts);
        if (statement.else.length > 0) {
          lines.push(`${indent}} else {`);
          appendBody(statement.else, inner, lines, starts);
        }
        lines.push(`${indent}}`);
        break;
      case 'for':
        lines.push(
          `${indent}for ${statement.name}: ${statement.type} = ${printExpr(statement.start)}; < ${printExpr(statement.end)}; += ${printExpr(statement.step)} {`,
        );
        appendBody(statement.body, inner, lines, starts);
        lines.push(`${indent}}`);
        break;
      case 'barrier':
        lines.push(`${indent}barrier`);
        break;
      case 'load_vector':
        lines.push(
          `${indent}let (${statement.names.join(', ')}): ${statement.type} = ${statement.memory}[${printExpr(statement.index)} ..+ ${statement.names.length}]`,
        );
        break;
      case 'store_vector':
        lines.push(
          `${indent}${statement.memory}[${printExpr(statement.index)} ..+ ${statement.values.length}] = (${statement.values.map(printExpr).join(', ')})`,
        );
        break;
      case 'shuffle':
        lines.push(
          `${indent}let ${statement.name}: ${statement.type} = shuffle_${statement.mode}(${printExpr(statement.value)}, ${printExpr(statement.lane)})`,
        );
        break;
      case 'reduce':
        lines.push(
          `${indent}let ${statement.name}: ${statement.type} = warp_reduce_${statement.reduction}(${printExpr(statement.value)})`,
        );
        break;
      case 'mma': {
        const operands = (['a', 'b', 'c'] as const).map(
          (key) => `${key}: (${statement[key].map(printExpr).join(', ')})`,
        );
        lines.push(
          `${indent}let (${statement.names.join(', ')}): f32 = mma_${statement.shape}(${operands.join(', ')})`,
        );
        break;
      }
      default:
        assertNever(statement, 'statement op');
    }
  }
}

/** Where one dispatch of a printed kernel is, as 1-based lines of printKernel's text. */
export interface PrintedDispatch {
  /** Its first line: the `kernel …` line for the spec's own entry point, `then …` for a stage. */
  readonly line: number;
  /** The line of each statement of its body, in the order a pre-order walk meets them. */
  readonly statements: readonly number[];
}

/** printKernel's text and where each dispatch and statement of it is: what line info counts in. */
export interface PrintedKernel {
  readonly text: string;
  /** One per dispatch in launch order: the spec's own entry point, then each stage. */
  readonly dispatches: readonly PrintedDispatch[];
}

/** The whole kernel as readable text: signature, scratch and shared arrays, body, then each stage. */
export function printKernel(specInput: KernelSpec): string {
  return printKernelLines(specInput).text;
}

/**
 * printKernel's text, plus the line of every dispatch and statement in it, so that a backend can
 * attribute its output to the line a statement is printed on (PTX `.loc`).
 */
export function printKernelLines(specInput: KernelSpec): PrintedKernel {
  // Read once, so the text describes one consistent spec whatever getters the input has.
  return printAssembledKernelLines(takeSnapshot(specInput) as KernelSpec);
}

/**
 * printKernelLines for a spec a backend assembled itself from a validated spec's parts (its bound
 * and legalized bodies): plain data it made, printed as it is, without the snapshot's deep copy,
 * which took most of the time of a PTX emission's line info.
 */
export function printAssembledKernelLines(spec: KernelSpec): PrintedKernel {
  const buffers = spec.buffers.map(
    (buffer) =>
      `${buffer.name}: ${buffer.access} ${buffer.element}[] @${buffer.group}:${buffer.binding}`,
  );
  const params = spec.params.map((param) => `${param.name}: ${param.type}`);
  const lines = [
    `kernel ${spec.id} v${spec.semanticVersion} ${spec.entryPoint}(${[...buffers, ...params].join(', ')})`,
    `  workgroup ${spec.launch.workgroupSize}, grid (${spec.launch.grid.join(', ')})${registerCap(spec.launch)}`,
    ...(ownField(spec, 'scratch') ?? []).map(
      (buffer) =>
        `  scratch ${buffer.name}: ${buffer.element}[${buffer.length}] @${buffer.group}:${buffer.binding}`,
    ),
    ...spec.shared.map((array) => `  shared ${array.name}: ${array.element}[${array.length}]`),
  ];
  const first: number[] = [];
  appendBody(spec.body, '  ', lines, first);
  const dispatches: PrintedDispatch[] = [{ line: 1, statements: first }];
  // Each further dispatch, in launch order, over the same buffers, scratch and params.
  for (const stage of ownField(spec, 'stages') ?? []) {
    const line = lines.length + 1;
    lines.push(
      `then ${stage.entryPoint}`,
      `  workgroup ${stage.launch.workgroupSize}, grid (${stage.launch.grid.join(', ')})${registerCap(stage.launch)}`,
      ...stage.shared.map((array) => `  shared ${array.name}: ${array.element}[${array.length}]`),
    );
    const statements: number[] = [];
    appendBody(stage.body, '  ', lines, statements);
    dispatches.push({ line, statements });
  }
  return { text: `${lines.join('\n')}\n`, dispatches };
}
