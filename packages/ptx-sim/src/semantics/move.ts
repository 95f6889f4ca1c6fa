// mov (plain, pack, unpack) and cvta as ALU operations.
import type { PtxType } from '../ast.js';
import { aluOp, big, decode, num, widthOf } from './modifiers.js';
import type { AluOp, Bits } from './types.js';

const MOV_TYPES = ['pred', 'b16', 'b32', 'b64', 'u16', 'u32', 'u64', 's16', 's32', 's64', 'f16', 'f16x2', 'bf16', 'bf16x2', 'f32', 'f64'] as const; // prettier-ignore

const ELEMENT_TYPES: Record<number, PtxType> = { 8: 'b8', 16: 'b16', 32: 'b32' };

/** Joins elements of `elementWidth` bits, element 0 lowest. */
function pack(elements: readonly Bits[], elementWidth: number, total: number): Bits {
  if (total === 64) {
    let value = 0n;
    for (let index = elements.length - 1; index >= 0; index--) {
      value = (value << BigInt(elementWidth)) | big(elements[index]);
    }
    return value;
  }
  let value = 0;
  for (let index = elements.length - 1; index >= 0; index--)
    value = value * 2 ** elementWidth + num(elements[index]);
  return value;
}

/** Splits a value into `count` elements of `elementWidth` bits, element 0 lowest. */
function unpack(value: Bits, elementWidth: number, count: number): Bits[] {
  const elements: Bits[] = [];
  if (typeof value === 'bigint') {
    const mask = (1n << BigInt(elementWidth)) - 1n;
    for (let index = 0; index < count; index++)
      elements.push(Number((value >> BigInt(index * elementWidth)) & mask));
    return elements;
  }
  for (let index = 0; index < count; index++) {
    elements.push(Math.floor(value / 2 ** (index * elementWidth)) % 2 ** elementWidth);
  }
  return elements;
}

/**
 * mov.type d, a copies the value. With `operandArity` telling that an operand is a vector, it is
 * the pack form `mov.bN d, {a, b, …}` (sources are the elements, element 0 in the low bits) or
 * the unpack form `mov.bN {a, b, …}, d` (destinations are the elements); the element width is the
 * instruction width over the element count. Sinks `_` in an unpack vector are the executor's to skip.
 */
function decodeMov(
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  arity?: readonly number[],
): AluOp {
  const d = decode(opcode, modifiers, []);
  const type = d.type(MOV_TYPES);
  if (operandCount !== 2) d.fail('expected 2 operands');
  const destinationCount = arity?.[0] ?? 1;
  const sourceCount = arity?.[1] ?? 1;
  if (destinationCount === 1 && sourceCount === 1)
    return aluOp(opcode, [type], [type], ([a]) => [a ?? 0]);
  const width = widthOf(type);
  const count = Math.max(destinationCount, sourceCount);
  const elementWidth = width / count;
  const elementType = ELEMENT_TYPES[elementWidth];
  if (
    (destinationCount > 1 && sourceCount > 1) ||
    !type.startsWith('b') ||
    elementType === undefined
  ) {
    return d.fail(`vector form of a .${type} with ${count} elements`);
  }
  const elementTypes = Array.from({ length: count }, (): PtxType => elementType);
  if (sourceCount > 1)
    return aluOp(opcode, elementTypes, [type], (sources) => [pack(sources, elementWidth, width)]);
  return aluOp(opcode, [type], elementTypes, ([a]) => unpack(a ?? 0, elementWidth, count));
}

/**
 * cvta / cvta.to between a state space and the generic space, as the identity on the address:
 * the executor passes addresses of its flat layout directly (its own cvta, when registered first,
 * takes precedence).
 */
function decodeCvta(opcode: string, modifiers: readonly string[]): AluOp {
  const d = decode(opcode, modifiers, [
    'to',
    'global',
    'shared',
    'shared::cta',
    'local',
    'const',
    'param',
    'param::entry',
  ]);
  const type = d.type(['u32', 'u64'] as const);
  const spaces = [...d.words].filter((word) => word !== 'to');
  if (spaces.length !== 1) d.fail('expected one state space');
  return aluOp(opcode, [type], [type], ([a]) => [a ?? (type === 'u64' ? 0n : 0)]);
}

type MoveDecoder = (
  opcode: string,
  modifiers: readonly string[],
  operandCount: number,
  arity?: readonly number[],
) => AluOp;

export const MOVE_DECODERS: ReadonlyMap<string, MoveDecoder> = new Map<string, MoveDecoder>([
  ['mov', decodeMov],
  ['cvta', decodeCvta],
]);
