import { MMA_FRAGMENTS, WARP_SIZE, type MmaShape } from './body.js';
import { f16FromBits } from './f16.js';

// The fragment layouts of MmaStmt (the PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating
// point type", .f16 A/B and .f32 C/D): g = lane >> 2, t = lane % 4.

/** The [row, k] of A held in half `half` of word `word` of `lane`'s `a` fragment. */
export function mmaAPosition(lane: number, word: number, half: number): [number, number] {
  return [(lane >> 2) + 8 * (word & 1), 2 * (lane % 4) + 8 * (word >> 1) + half];
}

/** The [k, col] of B held in half `half` of word `word` of `lane`'s `b` fragment. */
export function mmaBPosition(lane: number, word: number, half: number): [number, number] {
  return [2 * (lane % 4) + 8 * word + half, lane >> 2];
}

/** The [row, col] of C and D at element `index` of `lane`'s `c` fragment and `names`. */
export function mmaCPosition(lane: number, index: number): [number, number] {
  return [(lane >> 2) + 8 * (index >> 1), 2 * (lane % 4) + (index & 1)];
}

/** M, N and K of each shape. */
export const MMA_DIMENSIONS: {
  readonly [S in MmaShape]: { readonly m: number; readonly n: number; readonly k: number };
} = { m16n8k16: { m: 16, n: 8, k: 16 } };

/**
 * One warp's mma as the IR defines it: `a[lane]`, `b[lane]` (u32 words of two f16) and `c[lane]`
 * (f32) are each lane's fragments; returns each lane's 4 D values. Each D element starts from C and
 * adds the K products in increasing k, each product exact in f32 and each sum rounded to f32.
 */
export function mmaSemantics(
  shape: MmaShape,
  a: readonly (readonly number[])[],
  b: readonly (readonly number[])[],
  c: readonly (readonly number[])[],
): number[][] {
  const { m, n, k } = MMA_DIMENSIONS[shape];
  const counts = MMA_FRAGMENTS[shape];
  const matrixA = Array.from({ length: m }, () => new Array<number>(k).fill(0));
  const matrixB = Array.from({ length: k }, () => new Array<number>(n).fill(0));
  const half = (word: number, h: number): number => f16FromBits((word >>> (16 * h)) & 0xffff);
  for (let lane = 0; lane < WARP_SIZE; lane++) {
    for (let word = 0; word < counts.a; word++)
      for (let h = 0; h < 2; h++) {
        const [row, kk] = mmaAPosition(lane, word, h);
        (matrixA[row] as number[])[kk] = half(a[lane]?.[word] ?? 0, h);
      }
    for (let word = 0; word < counts.b; word++)
      for (let h = 0; h < 2; h++) {
        const [kk, col] = mmaBPosition(lane, word, h);
        (matrixB[kk] as number[])[col] = half(b[lane]?.[word] ?? 0, h);
      }
  }
  return Array.from({ length: WARP_SIZE }, (_, lane) =>
    Array.from({ length: counts.c }, (_, index) => {
      const [row, col] = mmaCPosition(lane, index);
      let sum = Math.fround(c[lane]?.[index] ?? 0);
      // A product of two f16 is exact in f32; a sum of two f32 in double rounded once to f32 is
      // correctly rounded (53 >= 2·24 + 2 bits), so this is the f32 addition.
      for (let kk = 0; kk < k; kk++)
        sum = Math.fround(
          sum +
            ((matrixA[row] as number[])[kk] as number) * ((matrixB[kk] as number[])[col] as number),
        );
      return sum;
    }),
  );
}
