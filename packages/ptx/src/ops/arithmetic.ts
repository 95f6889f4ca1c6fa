import type { BinaryOp, ScalarType, UnaryOp, WordOp } from '@forge/ir';
import { isaVersion, smVersion } from '../targets.js';
import { arithmeticType, bitType } from './types.js';
import type { PtxTarget } from '../targets.js';

/** Gives the mnemonic for an op on an operand type, or undefined when PTX on `target` lacks it. */
export type Mnemonic = (type: ScalarType, target: PtxTarget) => string | undefined;

const isFloat = (type: ScalarType): boolean => type === 'f32' || type === 'f16';
const isInteger = (type: ScalarType): boolean => type === 'u32' || type === 'i32';

// Explicit .rn on f32 add/sub/mul keeps ptxas from contracting them into fma, so results match the IR.
const rounded =
  (name: string): Mnemonic =>
  (type) =>
    isFloat(type)
      ? `${name}.rn.${arithmeticType(type)}`
      : isInteger(type)
        ? `${name}.${arithmeticType(type)}`
        : undefined;
const f32Only =
  (mnemonic: string): Mnemonic =>
  (type) =>
    type === 'f32' ? mnemonic : undefined;
const bitwise =
  (name: string): Mnemonic =>
  (type) =>
    type === 'f32' || type === 'f16' ? undefined : `${name}.${bitType(type)}`;
// min/max/abs on f16 need sm_80 / PTX 6.5; other targets widen them to f32.
const f16Gated =
  (name: string, needs: (target: PtxTarget) => boolean): Mnemonic =>
  (type, target) =>
    type === 'bool'
      ? undefined
      : type === 'f16' && !needs(target)
        ? undefined
        : `${name}.${arithmeticType(type)}`;
const compare =
  (condition: string, floatCondition = condition): Mnemonic =>
  (type) =>
    type === 'bool'
      ? undefined
      : `setp.${isFloat(type) ? floatCondition : condition}.${arithmeticType(type)}`;

/**
 * The PTX instruction for each unary op by operand type and target, undefined where PTX has none
 * (f16 ops are then widened to f32 by legalization). `rsqrt`, `exp2` and `log2` are PTX's `.approx`
 * instructions. Backend detail, exported for tests; engines do not need it.
 */
export const UNARY_MNEMONICS: Readonly<Record<UnaryOp, Mnemonic>> = {
  neg: (type) => (type === 'u32' || type === 'bool' ? undefined : `neg.${arithmeticType(type)}`),
  abs: f16Gated('abs', (target) => isaVersion(target) >= 65),
  not: (type) => (isFloat(type) ? undefined : `not.${bitType(type)}`),
  sqrt: f32Only('sqrt.rn.f32'),
  rsqrt: f32Only('rsqrt.approx.f32'),
  rcp: f32Only('rcp.rn.f32'),
  exp2: f32Only('ex2.approx.f32'),
  log2: f32Only('lg2.approx.f32'),
  floor: f32Only('cvt.rmi.f32.f32'),
};

/**
 * The PTX instruction for each binary op by operand type and target, undefined where PTX has none
 * (f16 min/max before sm_80 are then widened to f32 by legalization). Backend detail, exported for
 * tests; engines do not need it.
 */
export const BINARY_MNEMONICS: Readonly<Record<BinaryOp, Mnemonic>> = {
  add: rounded('add'),
  sub: rounded('sub'),
  mul: (type, target) =>
    isInteger(type) ? `mul.lo.${arithmeticType(type)}` : rounded('mul')(type, target),
  div: (type) =>
    type === 'f32' ? 'div.rn.f32' : isInteger(type) ? `div.${arithmeticType(type)}` : undefined,
  rem: (type) => (isInteger(type) ? `rem.${arithmeticType(type)}` : undefined),
  min: f16Gated('min', (target) => smVersion(target) >= 80),
  max: f16Gated('max', (target) => smVersion(target) >= 80),
  and: bitwise('and'),
  or: bitwise('or'),
  xor: bitwise('xor'),
  shl: (type) => (isInteger(type) ? 'shl.b32' : undefined),
  shr: (type) => (isInteger(type) ? `shr.${arithmeticType(type)}` : undefined),
  // Float comparisons are ordered except `ne`, which is true for NaN as in the IR.
  eq: compare('eq'),
  ne: compare('ne', 'neu'),
  lt: compare('lt'),
  le: compare('le'),
  gt: compare('gt'),
  ge: compare('ge'),
};

export const FMA_MNEMONIC: Mnemonic = (type) =>
  isFloat(type) ? `fma.rn.${arithmeticType(type)}` : undefined;

/**
 * Each word op's instruction, given the destination and the operands' text; typed over every
 * WordOp, so a new one must be listed. ptxas takes 32-bit immediates in every operand of these.
 */
export const WORD_INSTRUCTIONS: {
  readonly [K in WordOp]: (out: string, args: readonly string[]) => string;
} = {
  // Signed bytes of both words (sm_61+, so every PTX_ARCHS target has it).
  dot4_i8: (out, args) => `dp4a.s32.s32 ${out}, ${args.join(', ')};`,
  // `.clamp` and `.wrap` agree on the IR's shifts 0..31 (sm_32+).
  funnel_shift_right: (out, args) => `shf.r.clamp.b32 ${out}, ${args.join(', ')};`,
  // lop3's immLut is F(0xF0, 0xCC, 0xAA) for (mask, a, b), and (a & mask) | (b & ~mask) is 0xCA.
  bit_select: (out, args) => `lop3.b32 ${out}, ${args.join(', ')}, 0xCA;`,
};

export const SELECT_MNEMONIC: Mnemonic = (type) =>
  type === 'bool' ? undefined : `selp.${bitType(type)}`;
