// Literal decoding: PTX integer and float immediates, exactly as the ISA manual spells them.

export type NumberLiteral =
  | { readonly kind: 'integer'; readonly value: bigint }
  | { readonly kind: 'float'; readonly bits: bigint; readonly width: 32 | 64 };

const DECIMAL = /^(?:0|[1-9][0-9]*)[uU]?$/;
const HEX = /^0[xX][0-9a-fA-F]+[uU]?$/;
const OCTAL = /^0[0-7]+[uU]?$/;
const BINARY = /^0[bB][01]+[uU]?$/;
const F32_BITS = /^0[fF][0-9a-fA-F]{8}$/;
const F64_BITS = /^0[dD][0-9a-fA-F]{16}$/;
// A decimal float needs a fraction or an exponent; `09` is a bad octal, not nine.
const DECIMAL_FLOAT = /^[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)$/;

/** Decodes one number token; undefined when the text is not a PTX literal. */
export function parseNumberLiteral(text: string): NumberLiteral | undefined {
  const literal = decodeLiteral(text);
  // PTX integer literals are 64-bit; anything wider is a typo, not a value to truncate silently.
  if (literal?.kind === 'integer' && literal.value >= 1n << 64n) return undefined;
  return literal;
}

/**
 * Whether `digits` (a radix's digits) may hold a value below 2^64: at most `most` of them after
 * leading zeros, so a literal of a million digits is refused before BigInt parses it.
 */
function fewDigits(digits: string, most: number): boolean {
  let first = 0;
  while (first < digits.length - 1 && digits.charCodeAt(first) === 48) first++;
  return digits.length - first <= most;
}

function integer(prefix: string, digits: string, most: number): NumberLiteral | undefined {
  return fewDigits(digits, most)
    ? { kind: 'integer', value: BigInt(`${prefix}${digits}`) }
    : undefined;
}

function decodeLiteral(text: string): NumberLiteral | undefined {
  const digits = text.endsWith('U') || text.endsWith('u') ? text.slice(0, -1) : text;
  // 2^64 has 20 decimal, 17 hex, 65 binary and 22 octal digits.
  if (DECIMAL.test(text)) return integer('', digits, 20);
  if (HEX.test(text)) return integer('0x', digits.slice(2), 16);
  if (BINARY.test(text)) return integer('0b', digits.slice(2), 64);
  if (OCTAL.test(text)) return integer('0o', digits.slice(1), 22);
  if (F32_BITS.test(text)) return { kind: 'float', bits: BigInt(`0x${text.slice(2)}`), width: 32 };
  if (F64_BITS.test(text)) return { kind: 'float', bits: BigInt(`0x${text.slice(2)}`), width: 64 };
  if (DECIMAL_FLOAT.test(text)) return { kind: 'float', bits: f64Bits(Number(text)), width: 64 };
  return undefined;
}

/** Negates a literal: integers arithmetically, floats by flipping the sign bit of their width. */
export function negateLiteral(literal: NumberLiteral): NumberLiteral {
  if (literal.kind === 'integer') return { kind: 'integer', value: -literal.value };
  const sign = 1n << BigInt(literal.width - 1);
  return { kind: 'float', bits: literal.bits ^ sign, width: literal.width };
}

const scratch = new DataView(new ArrayBuffer(8));

export function f64Bits(value: number): bigint {
  scratch.setFloat64(0, value);
  return scratch.getBigUint64(0);
}

export function f32Bits(value: number): bigint {
  scratch.setFloat32(0, value);
  return BigInt(scratch.getUint32(0));
}

export function f64FromBits(bits: bigint): number {
  scratch.setBigUint64(0, bits);
  return scratch.getFloat64(0);
}

export function f32FromBits(bits: bigint): number {
  scratch.setUint32(0, Number(BigInt.asUintN(32, bits)));
  return scratch.getFloat32(0);
}
