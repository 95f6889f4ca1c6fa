// Tensor-core helpers: mma.sync.aligned.{m16n8k16,m16n8k8}.row.col with f16/bf16 inputs, and
// ldmatrix.sync.aligned.m8n8 — pure functions over the whole warp's fragments, laid out as in the
// PTX ISA's "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8" and "ldmatrix" sections:
//   groupID = lane >> 2, threadID_in_group = lane % 4
//   A (16×K, row): element i of a lane (i = 2·reg + half) sits at
//     row = groupID + 8·(i ∈ {2,3,6,7}), col = 2·threadID_in_group + (i & 1) + 8·(i ≥ 4)
//   B (K×8, col): element i at row = 2·threadID_in_group + (i & 1) + 8·(i ≥ 2), col = groupID
//   C/D (16×8): element i at row = groupID + 8·(i ≥ 2), col = 2·threadID_in_group + (i & 1)
// (m16n8k8 uses the same formulas with A holding a0..a3 and B b0..b1.)
import { bf16FromBits, f16FromBits, f16ToBits, f32FromBits, f32ToBits, lowHalf, highHalf, packHalves } from './float-bits.js'; // prettier-ignore
import { roundSum, F16, F32, roundToFormat } from './rounding.js';

export type MmaShape = 'm16n8k16' | 'm16n8k8';

export interface MmaOptions {
  /** Type of D: four .f32 registers (default) or two .f16x2. */
  readonly dtype?: 'f32' | 'f16';
  /** Type of C, likewise. */
  readonly ctype?: 'f32' | 'f16';
  /** Type of the A and B elements (default .f16). */
  readonly abtype?: 'f16' | 'bf16';
}

const WARP = 32;
const M = 16;
const N = 8;

/** Reads the element `index` (two per 32-bit register, element 0 in the low half) of a fragment. */
function halfElement(registers: readonly number[] | undefined, index: number): number {
  const register = registers?.[index >> 1] ?? 0;
  return index & 1 ? highHalf(register) : lowHalf(register);
}

/** The (row, col) of accumulator element `index` of `lane`. */
const accumulatorPosition = (lane: number, index: number): readonly [number, number] => [
  (lane >> 2) + (index >= 2 ? 8 : 0),
  2 * (lane % 4) + (index & 1),
];

/**
 * D = A·B + C for one warp: a[lane][reg], b[lane][reg], c[lane][reg] are 32-bit register bit
 * patterns; returns d[lane][reg]. Each D element starts from C (widened to f32) and adds the K
 * products in increasing k, each product exact (computed in double) and each addition rounded to
 * f32 (nearest even) — a defined order; hardware accumulates at least as precisely. An .f16 D is
 * that f32 result rounded once to f16. NaN results are the canonical f32 NaN.
 */
export function mmaSync(
  shape: MmaShape,
  a: readonly (readonly number[])[],
  b: readonly (readonly number[])[],
  c: readonly (readonly number[])[],
  options: MmaOptions = {},
): number[][] {
  const k = shape === 'm16n8k16' ? 16 : 8;
  const element = options.abtype === 'bf16' ? bf16FromBits : f16FromBits;
  const matrixA: number[][] = Array.from({ length: M }, () => new Array<number>(k).fill(0));
  const matrixB: number[][] = Array.from({ length: k }, () => new Array<number>(N).fill(0));
  const matrixC: number[][] = Array.from({ length: M }, () => new Array<number>(N).fill(0));
  for (let lane = 0; lane < WARP; lane++) {
    const group = lane >> 2;
    const thread = lane % 4;
    for (let index = 0; index < k / 2; index++) {
      const row = group + ((index >> 1) & 1 ? 8 : 0);
      const col = 2 * thread + (index & 1) + (index >= 4 ? 8 : 0);
      (matrixA[row] as number[])[col] = element(halfElement(a[lane], index));
    }
    for (let index = 0; index < k / 4; index++) {
      const row = 2 * thread + (index & 1) + (index >= 2 ? 8 : 0);
      (matrixB[row] as number[])[group] = element(halfElement(b[lane], index));
    }
    for (let index = 0; index < 4; index++) {
      const [row, col] = accumulatorPosition(lane, index);
      const value =
        options.ctype === 'f16'
          ? f16FromBits(halfElement(c[lane], index))
          : f32FromBits(c[lane]?.[index] ?? 0);
      (matrixC[row] as number[])[col] = value;
    }
  }
  const result = (row: number, col: number): number => {
    let sum = (matrixC[row] as number[])[col] as number;
    for (let kk = 0; kk < k; kk++) {
      const product =
        ((matrixA[row] as number[])[kk] as number) * ((matrixB[kk] as number[])[col] as number);
      sum = roundSum(sum, product, F32, 'rn');
    }
    return sum;
  };
  return Array.from({ length: WARP }, (_, lane) => {
    const values = [0, 1, 2, 3].map((index) => {
      const [row, col] = accumulatorPosition(lane, index);
      return result(row, col);
    });
    if (options.dtype === 'f16') {
      const bits = values.map((value) => f16ToBits(roundToFormat(value, F16, 'rn')));
      return [packHalves(bits[0] ?? 0, bits[1] ?? 0), packHalves(bits[2] ?? 0, bits[3] ?? 0)];
    }
    return values.map(f32ToBits);
  });
}

export type Address = number | bigint;

const offsetAddress = <A extends Address>(address: A, bytes: number): A =>
  (typeof address === 'bigint' ? address + BigInt(bytes) : (address as number) + bytes) as A;

/**
 * ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.b16: lanes 8m..8m+7 give the row addresses of
 * matrix m; lane l receives, in register m, the 16-bit elements (l>>2, 2(l%4)) and
 * (l>>2, 2(l%4)+1) of matrix m (low half first) — of its transpose with .trans. Returns
 * r[lane][m]. `read16` reads the 16-bit element at a byte address (rows are 16 contiguous bytes).
 * Calls `rowAddresses` for lanes 0..8·count−1 in order, each call followed by that row's eight
 * `read16` calls (callers may attribute reads to the lane that gave the row).
 */
export function ldmatrix<A extends Address>(
  shape: 'm8n8',
  count: 1 | 2 | 4,
  trans: boolean,
  rowAddresses: (lane: number) => A,
  read16: (address: A) => number,
): number[][] {
  if (shape !== 'm8n8') throw new Error(`unsupported ldmatrix shape .${String(shape)}`);
  const matrices = Array.from({ length: count }, (_, matrix) =>
    Array.from({ length: 8 }, (_, row) => {
      const base = rowAddresses(8 * matrix + row);
      return Array.from({ length: 8 }, (_, col) => read16(offsetAddress(base, 2 * col)) & 0xffff);
    }),
  );
  return Array.from({ length: WARP }, (_, lane) => {
    const row = lane >> 2;
    const col = 2 * (lane % 4);
    return matrices.map((matrix) => {
      const at = (r: number, c: number): number =>
        (matrix[trans ? c : r] as number[])[trans ? r : c] as number;
      return packHalves(at(row, col), at(row, col + 1));
    });
  });
}
