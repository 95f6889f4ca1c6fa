import type { Instruction } from '../ast.js';

/**
 * The execution unit a PTX instruction occupies, for the timing model's per-class pipes and latencies.
 * One PTX instruction counts as one warp instruction of its class, even where ptxas expands it
 * into several SASS instructions (`div.rn.f32`, `sqrt.rn.f32`, 64-bit integer multiply).
 */
export type IssueClass =
  | 'fp32'
  | 'fp16'
  | 'fp64'
  | 'int'
  | 'imad'
  | 'sfu'
  | 'conversion'
  | 'bitcount'
  | 'shuffle'
  | 'memory'
  | 'tensor'
  | 'control';

/** Every issue class, in the order counters list them. */
export const ISSUE_CLASSES: readonly IssueClass[] = [
  'fp32', 'fp16', 'fp64', 'int', 'imad', 'sfu', 'conversion', 'bitcount', 'shuffle', 'memory', 'tensor', 'control',
]; // prettier-ignore

// MUFU: the special-function unit's opcodes (CUDA Programming Guide: "32-bit floating-point reciprocal, reciprocal square root, base-2 logarithm, base 2 exponential, sine, cosine").
const SFU = new Set(['rcp', 'rsqrt', 'sqrt', 'ex2', 'lg2', 'sin', 'cos', 'tanh']);
const FLOAT_PIPE = new Set(['add', 'sub', 'mul', 'fma', 'mad', 'neg', 'abs', 'min', 'max', 'div']);
const BITCOUNT = new Set(['popc', 'clz', 'brev', 'bfind']);
const MEMORY = new Set(['ld', 'st', 'atom', 'red', 'ldu', 'ldmatrix', 'cp', 'prefetch']);
const CONTROL = new Set([
  'bra',
  'ret',
  'exit',
  'bar',
  'barrier',
  'membar',
  'fence',
  'griddepcontrol',
  'trap',
  'nanosleep',
]);
const HALF = new Set(['f16', 'f16x2', 'bf16', 'bf16x2']);
// Integer multiply, multiply-add and dot product (IMAD, IDP) issue to the FMA pipe, not the ALU's
// (NVIDIA's pipe descriptions for GA100 and GH100: "FMA pipe handles IMAD, IDP, and FP32").
const INTEGER_MULTIPLY = new Set(['mul', 'mad', 'mul24', 'mad24', 'dp4a', 'dp2a']);

/** The unit `instruction` issues to, from its opcode and type modifiers. */
export function issueClassOf(instruction: Pick<Instruction, 'opcode' | 'modifiers'>): IssueClass {
  const { opcode, modifiers } = instruction;
  if (SFU.has(opcode) && !(opcode === 'sqrt' && !modifiers.includes('approx'))) return 'sfu';
  if (opcode === 'sqrt') return 'fp32';
  // f16 to f32 is an fp16 add in SASS (ptxas 13.0 on sm_80/sm_90: HADD2.F32 R, -RZ, R.H0_H0).
  if (opcode === 'cvt') return modifiers.join('.').endsWith('f32.f16') ? 'fp16' : 'conversion';
  if (opcode === 'shfl') return 'shuffle';
  if (opcode === 'mma' || opcode === 'wgmma') return 'tensor';
  if (BITCOUNT.has(opcode)) return 'bitcount';
  if (MEMORY.has(opcode)) return 'memory';
  if (CONTROL.has(opcode) || opcode.startsWith('bar')) return 'control';
  const float = modifiers.some((modifier) => /^(f16|bf16|f32|f64|tf32)/.test(modifier));
  if (INTEGER_MULTIPLY.has(opcode) && !float) return 'imad';
  if (FLOAT_PIPE.has(opcode)) {
    if (modifiers.some((modifier) => HALF.has(modifier))) return 'fp16';
    if (modifiers.includes('f64')) return 'fp64';
    if (modifiers.includes('f32')) return 'fp32';
  }
  return 'int';
}
