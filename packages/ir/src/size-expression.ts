import { ForgeError } from './errors.js';

/**
 * Size expressions describe launch geometry and shared-array lengths: non-negative integers,
 * names (params or schedule knobs), `+ - * /` (integer division), parentheses and the functions
 * `ceil_div`, `min`, `max`. Engines evaluate them with `evaluateSizeExpression`.
 */
export type SizeExpression =
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'name'; readonly name: string }
  | {
      readonly kind: 'binary';
      readonly op: SizeOperator;
      readonly left: SizeExpression;
      readonly right: SizeExpression;
    }
  | {
      readonly kind: 'call';
      readonly fn: SizeFunction;
      readonly args: readonly [SizeExpression, SizeExpression];
    };

/**
 * Arithmetic of size expressions, on non-negative integers: `/` rounds down, and a negative
 * difference or a division by zero is a SizeExpressionError when the expression is evaluated.
 */
export type SizeOperator = '+' | '-' | '*' | '/';
/**
 * The functions a size expression may call, each with two arguments: `ceil_div(a, b)`, `min(a, b)`,
 * `max(a, b)`.
 */
export const SIZE_FUNCTIONS = ['ceil_div', 'min', 'max'] as const;
/** A function a size expression may call; see SIZE_FUNCTIONS. */
export type SizeFunction = (typeof SIZE_FUNCTIONS)[number];

/** A size expression failed to parse or evaluate; the message says where. */
export class SizeExpressionError extends ForgeError {
  override readonly name = 'SizeExpressionError';
}

/** Size expressions are u32 on the targets: literals and every intermediate result stay below 2^32. */
export const MAX_SIZE_VALUE = 0xffffffff;

const TOKEN = /\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/(),]))/y;
const MAX_LENGTH = 256;

type Token =
  | { kind: 'number'; value: number }
  | { kind: 'name'; name: string }
  | { kind: 'punct'; text: string };

function tokenize(text: string): Token[] {
  if (text.length > MAX_LENGTH)
    throw new SizeExpressionError(`longer than ${MAX_LENGTH} characters`);
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const start = TOKEN.lastIndex;
    if (/^\s*$/.test(text.slice(start))) break;
    const match = TOKEN.exec(text);
    if (match === null)
      throw new SizeExpressionError(
        `unexpected character at offset ${start} in ${JSON.stringify(text)}`,
      );
    if (match[1] !== undefined) {
      const value = Number(match[1]);
      if (!Number.isSafeInteger(value) || value > MAX_SIZE_VALUE)
        throw new SizeExpressionError(
          `number ${match[1].slice(0, 20)} is too large (max ${MAX_SIZE_VALUE})`,
        );
      tokens.push({ kind: 'number', value });
    } else if (match[2] !== undefined) tokens.push({ kind: 'name', name: match[2] });
    else tokens.push({ kind: 'punct', text: match[3] ?? '' });
  }
  return tokens;
}

/**
 * Parses a size expression's text (at most 256 characters); throws SizeExpressionError saying what
 * is wrong where.
 */
export function parseSizeExpression(text: string): SizeExpression {
  const tokens = tokenize(text);
  let position = 0;
  const describe = (): string => {
    const token = tokens[position];
    if (token === undefined) return 'end of expression';
    return token.kind === 'number'
      ? String(token.value)
      : token.kind === 'name'
        ? token.name
        : `'${token.text}'`;
  };
  const punct = (text: string): boolean => {
    const token = tokens[position];
    if (token?.kind === 'punct' && token.text === text) {
      position++;
      return true;
    }
    return false;
  };
  const expect = (text: string): void => {
    if (!punct(text)) throw new SizeExpressionError(`expected '${text}' but found ${describe()}`);
  };
  const factor = (): SizeExpression => {
    const token = tokens[position];
    if (token === undefined) throw new SizeExpressionError('unexpected end of expression');
    if (token.kind === 'number') {
      position++;
      return { kind: 'number', value: token.value };
    }
    if (token.kind === 'name') {
      position++;
      if (!punct('(')) return { kind: 'name', name: token.name };
      const fn = SIZE_FUNCTIONS.find((candidate) => candidate === token.name);
      if (fn === undefined)
        throw new SizeExpressionError(
          `unknown function '${token.name}' (known: ${SIZE_FUNCTIONS.join(', ')})`,
        );
      const first = sum();
      expect(',');
      const second = sum();
      expect(')');
      return { kind: 'call', fn, args: [first, second] };
    }
    if (punct('(')) {
      const inner = sum();
      expect(')');
      return inner;
    }
    throw new SizeExpressionError(`unexpected ${describe()}`);
  };
  const product = (): SizeExpression => {
    let left = factor();
    for (;;) {
      const op = punct('*') ? '*' : punct('/') ? '/' : undefined;
      if (op === undefined) return left;
      left = { kind: 'binary', op, left, right: factor() };
    }
  };
  const sum = (): SizeExpression => {
    let left = product();
    for (;;) {
      const op = punct('+') ? '+' : punct('-') ? '-' : undefined;
      if (op === undefined) return left;
      left = { kind: 'binary', op, left, right: product() };
    }
  };
  const result = sum();
  if (position !== tokens.length) throw new SizeExpressionError(`unexpected ${describe()}`);
  return result;
}

/** The names an expression refers to, in first-use order. */
export function sizeExpressionNames(expression: SizeExpression): string[] {
  const names: string[] = [];
  const visit = (node: SizeExpression): void => {
    if (node.kind === 'name') {
      if (!names.includes(node.name)) names.push(node.name);
    } else if (node.kind === 'binary') {
      visit(node.left);
      visit(node.right);
    } else if (node.kind === 'call') node.args.forEach(visit);
  };
  visit(expression);
  return names;
}

function apply(op: SizeOperator | SizeFunction, left: number, right: number): number {
  const value = applyUnchecked(op, left, right);
  if (value > MAX_SIZE_VALUE)
    throw new SizeExpressionError(
      `${left} ${op} ${right} exceeds the u32 range (max ${MAX_SIZE_VALUE})`,
    );
  return value;
}

function applyUnchecked(op: SizeOperator | SizeFunction, left: number, right: number): number {
  switch (op) {
    case '+':
      return left + right;
    case '-':
      if (right > left) throw new SizeExpressionError(`${left} - ${right} is negative`);
      return left - right;
    case '*':
      return left * right;
    case '/':
    case 'ceil_div':
      if (right === 0) throw new SizeExpressionError(`division of ${left} by zero`);
      return op === '/' ? Math.floor(left / right) : Math.ceil(left / right);
    case 'min':
      return Math.min(left, right);
    case 'max':
      return Math.max(left, right);
  }
}

/** Substitutes the names `values` knows and folds constant subexpressions. */
export function bindSizeExpression(
  expression: SizeExpression,
  values: Readonly<Record<string, number>>,
): SizeExpression {
  switch (expression.kind) {
    case 'number':
      return expression;
    case 'name': {
      const value = Object.hasOwn(values, expression.name) ? values[expression.name] : undefined;
      return value === undefined ? expression : { kind: 'number', value };
    }
    case 'binary':
    case 'call': {
      const [left, right] =
        expression.kind === 'binary' ? [expression.left, expression.right] : expression.args;
      const boundLeft = bindSizeExpression(left, values);
      const boundRight = bindSizeExpression(right, values);
      const op = expression.kind === 'binary' ? expression.op : expression.fn;
      if (boundLeft.kind === 'number' && boundRight.kind === 'number') {
        return { kind: 'number', value: apply(op, boundLeft.value, boundRight.value) };
      }
      return expression.kind === 'binary'
        ? { kind: 'binary', op: expression.op, left: boundLeft, right: boundRight }
        : { kind: 'call', fn: expression.fn, args: [boundLeft, boundRight] };
    }
  }
}

/** Evaluates an expression (text or parsed) with every name bound; throws SizeExpressionError otherwise. */
export function evaluateSizeExpression(
  expression: SizeExpression | string,
  values: Readonly<Record<string, number>>,
): number {
  const parsed = typeof expression === 'string' ? parseSizeExpression(expression) : expression;
  const bound = bindSizeExpression(parsed, values);
  if (bound.kind !== 'number') {
    throw new SizeExpressionError(`unbound name(s): ${sizeExpressionNames(bound).join(', ')}`);
  }
  return bound.value;
}

const PRECEDENCE: Readonly<Record<SizeOperator, number>> = { '+': 1, '-': 1, '*': 2, '/': 2 };

/** Prints an expression with the fewest parentheses that keep its meaning. */
export function formatSizeExpression(
  expression: SizeExpression,
  parentPrecedence = 0,
  rightSide = false,
): string {
  switch (expression.kind) {
    case 'number':
      return String(expression.value);
    case 'name':
      return expression.name;
    case 'call':
      return `${expression.fn}(${formatSizeExpression(expression.args[0])}, ${formatSizeExpression(expression.args[1])})`;
    case 'binary': {
      const precedence = PRECEDENCE[expression.op];
      const text = `${formatSizeExpression(expression.left, precedence)} ${expression.op} ${formatSizeExpression(expression.right, precedence, true)}`;
      const needsParentheses =
        precedence < parentPrecedence || (rightSide && precedence === parentPrecedence);
      return needsParentheses ? `(${text})` : text;
    }
  }
}
