// What the two tensor-core mat-vec catalog entries (wmma-gemv, q4k-soa-wmma) share: the shape's
// sizes, the checks on columns and output, and the float64 product Y = X·Wᵀ.
import { ValidationError } from '../errors.js';
import type { Shape } from './catalog-kernel.js';

/** Columns of X one launch takes: two n8 tiles of the mma. */
export const WMMA_MAX_COLS = 16;

/** n_cols, n_out and n_in of a shape or params (0 when missing: Shape is an untyped record). */
export const wmmaDims = (shape: Shape): [number, number, number] => [
  shape['n_cols'] ?? 0,
  shape['n_out'] ?? 0,
  shape['n_in'] ?? 0,
];

/** Throws a ValidationError with the one problem, at `path`. */
export const shapeProblem = (path: string, message: string): never => {
  throw new ValidationError([{ path, message }]);
};

/** The first checks of both kernels: 1 to 16 columns, at least one output row. */
export function checkWmmaColumns(nCols: number, nOut: number): void {
  if (!Number.isSafeInteger(nCols) || nCols < 1 || nCols > WMMA_MAX_COLS)
    shapeProblem('n_cols', `${nCols} is not between 1 and ${WMMA_MAX_COLS}`);
  if (!Number.isSafeInteger(nOut) || nOut < 1) shapeProblem('n_out', `${nOut} is not at least 1`);
}

/** The last check of both kernels: X's and Y's u32 word offsets fit 32 bits. */
export function checkWmmaColumnOffsets(nCols: number, nOut: number, nIn: number): void {
  if ((nCols * nIn) / 2 > 2 ** 32 - 1 || nCols * nOut > 2 ** 32 - 1)
    shapeProblem('n_in', `${nCols} columns of ${nIn} halves exceed 32-bit word offsets`);
}

/** Y[c][r] = Σ_k W[r][k]·X[c][k] in float64, W [n_out][n_in] and X [n_cols][n_in] row-major. */
export function wmmaProduct(
  w: ArrayLike<number>,
  x: ArrayLike<number>,
  [nCols, nOut, nIn]: readonly [number, number, number],
): Float64Array {
  const y = new Float64Array(nCols * nOut);
  for (let c = 0; c < nCols; c++)
    for (let r = 0; r < nOut; r++) {
      let dot = 0;
      for (let k = 0; k < nIn; k++) dot += (w[r * nIn + k] ?? 0) * (x[c * nIn + k] ?? 0);
      y[c * nOut + r] = dot;
    }
  return y;
}
