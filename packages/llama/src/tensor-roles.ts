// What each tensor of arch `llama` is for, and the storage types each role takes: a matmul weight
// needs a mat-vec kernel for its type, the embedding a row kernel, a norm weight f32 values (other
// types converted to f32 where every value converts exactly).
import { QUANT_FORMATS, QUANT_TYPES, type QuantType } from '@forge/ir/gguf';
import type { GgmlType } from './gguf/ggml-types.js';

/** A tensor's storage type: plain floats or one of the GGUF block formats Forge reads. */
export type TensorType = 'f32' | 'f16' | QuantType;

/** The mat-vec kernel for each weight type: the table `forge decode` chooses matmuls by. */
export const MATVEC_KERNELS: Readonly<Partial<Record<TensorType, string>>> = {
  f32: 'f32-gemv',
  f16: 'f16-gemv',
  q8_0: 'q8_0-gemv',
  q4_K: 'q4k-gemv',
  // Repacked at load into structure-of-arrays rows, which stream in whole sectors.
  q6_K: 'q6k-soa-gemv',
};

/**
 * The SwiGLU kernel for gate and up projections of one type: y = silu(gate x) · (up x) in one
 * launch; a layer whose gate and up differ in type, or whose type has none, runs them apart.
 */
export const SWIGLU_KERNELS: Readonly<Partial<Record<TensorType, string>>> = {
  q4_K: 'q4k-swiglu-gemv',
};

/** The embedding-row kernel for each token_embd type. */
export const GET_ROWS_KERNELS: Readonly<Partial<Record<TensorType, string>>> = {
  f32: 'get-rows-f32',
  f16: 'get-rows-f16',
  q8_0: 'get-rows-q8_0',
  q4_K: 'get-rows-q4k',
  q6_K: 'get-rows-q6k',
};

/**
 * ggml types a norm weight may have, read as f32: halves and bfloat16 widen exactly, and a q8_0 or
 * q4_0 value is an f16 scale times an integer of at most 8 bits, which f32 holds exactly.
 */
export const NORM_TYPES: readonly string[] = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0'];

/** The role of a tensor in the decode step, which decides the types it may have. */
export type TensorRole = 'embedding' | 'matmul' | 'norm' | 'tied-embedding';

/** The Forge type of a ggml type, if Forge reads it. */
export function tensorTypeOf(type: GgmlType): TensorType | undefined {
  if (type.name === 'f32' || type.name === 'f16') return type.name;
  return QUANT_TYPES.find((quant) => QUANT_FORMATS[quant].ggmlTypeId === type.id);
}

const kernelTypes = (table: Readonly<Partial<Record<TensorType, string>>>): string =>
  Object.keys(table).join(', ');

/** Why a tensor of `type` cannot serve `role`, or undefined when it can. */
export function roleTypeProblem(role: TensorRole, type: GgmlType): string | undefined {
  const forgeType = tensorTypeOf(type);
  switch (role) {
    case 'norm':
      return NORM_TYPES.includes(type.name)
        ? undefined
        : `type ${type.name} cannot be a norm weight (f32, or ${NORM_TYPES.slice(1).join(', ')} converted exactly to f32)`;
    case 'matmul':
      return forgeType !== undefined && MATVEC_KERNELS[forgeType] !== undefined
        ? undefined
        : `type ${type.name} has no Forge mat-vec kernel (types with one: ${kernelTypes(MATVEC_KERNELS)})`;
    case 'embedding':
      return forgeType !== undefined && GET_ROWS_KERNELS[forgeType] !== undefined
        ? undefined
        : `type ${type.name} has no Forge embedding-row kernel (types with one: ${kernelTypes(GET_ROWS_KERNELS)})`;
    case 'tied-embedding':
      return (
        roleTypeProblem('embedding', type) ??
        (roleTypeProblem('matmul', type) === undefined
          ? undefined
          : `type ${type.name} has no Forge mat-vec kernel for the output, which is tied to token_embd.weight (types with one: ${kernelTypes(MATVEC_KERNELS)})`)
      );
  }
}
