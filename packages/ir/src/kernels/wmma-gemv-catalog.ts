// The catalog entry of `wmma-gemv`: shapes, f16 inputs and the float64 reference.
import { ValidationError } from '../errors.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { fillUniform } from './random.js';
import { WMMA_GEMV_SPEC } from './wmma-gemv.js';

/** Columns of X one launch takes: two n8 tiles of the mma. */
export const WMMA_MAX_COLS = 16;

const size = (shape: Shape, name: string): number => shape[name] ?? 0;
/** n_cols, n_out and n_in of a shape or params (0 when missing). */
const dims = (shape: Shape): [number, number, number] => [
  size(shape, 'n_cols'),
  size(shape, 'n_out'),
  size(shape, 'n_in'),
];

/** Throws a ValidationError naming the first shape field `wmma-gemv` cannot run. */
function checkShape(shape: Shape): void {
  const [nCols, nOut, nIn] = dims(shape);
  const problem = (path: string, message: string): never => {
    throw new ValidationError([{ path, message }]);
  };
  if (!Number.isSafeInteger(nCols) || nCols < 1 || nCols > WMMA_MAX_COLS)
    problem('n_cols', `${nCols} is not between 1 and ${WMMA_MAX_COLS}`);
  if (!Number.isSafeInteger(nOut) || nOut < 1) problem('n_out', `${nOut} is not at least 1`);
  if (!Number.isSafeInteger(nIn) || nIn < 16 || nIn % 16 !== 0)
    problem('n_in', `${nIn} is not a multiple of 16, the mma's K`);
  // u32 word offsets of rows up to the last tile's (n_out rounded up to 16 rows).
  if ((Math.ceil(nOut / 16) * 16 * nIn) / 2 > 2 ** 32 - 1)
    problem('n_out', `${nOut} rows of ${nIn} halves exceed 32-bit word offsets`);
  if ((nCols * nIn) / 2 > 2 ** 32 - 1 || nCols * nOut > 2 ** 32 - 1)
    problem('n_in', `${nCols} columns of ${nIn} halves exceed 32-bit word offsets`);
}

/** Y = X·Wᵀ in float64 from the f16 values of W [n_out][n_in] and X [n_cols][n_in]. */
function reference(
  inputs: Readonly<Record<string, ArrayLike<number>>>,
  params: Readonly<Record<string, number>>,
): Record<string, Float64Array> {
  const [nCols, nOut, nIn] = dims(params);
  const w = unpackF16Words(inputs['w'] ?? [], nOut * nIn);
  const x = unpackF16Words(inputs['x'] ?? [], nCols * nIn);
  const y = new Float64Array(nCols * nOut);
  for (let c = 0; c < nCols; c++)
    for (let r = 0; r < nOut; r++) {
      let dot = 0;
      for (let k = 0; k < nIn; k++) dot += (w[r * nIn + k] as number) * (x[c * nIn + k] as number);
      y[c * nOut + r] = dot;
    }
  return { y };
}

/** Catalog kernel `wmma-gemv`: f16 W and X, 1–16 columns, tensor-core mma. */
export const wmmaGemv: CatalogKernel = {
  spec: WMMA_GEMV_SPEC,
  shapeNames: ['n_cols', 'n_out', 'n_in'],
  defaultShape: { n_cols: 4, n_out: 64, n_in: 512 },
  params: (shape) => ({
    n_cols: size(shape, 'n_cols'),
    n_out: size(shape, 'n_out'),
    n_in: size(shape, 'n_in'),
  }),
  bufferLengths: (shape) => ({
    w: (size(shape, 'n_out') * size(shape, 'n_in')) / 2,
    x: (size(shape, 'n_cols') * size(shape, 'n_in')) / 2,
    y: size(shape, 'n_cols') * size(shape, 'n_out'),
  }),
  outputs: ['y'],
  reference,
  // The mma's f32 sums in an unspecified order against float64: well below 1e-10 at n_in 4096.
  tolerance: 1e-10,
  checkShape,
  generateInput({ buffer, length, rng, magnitude }) {
    if (buffer !== 'w' && buffer !== 'x') return undefined;
    return packF16Words(fillUniform(new Float32Array(2 * length), rng, magnitude));
  },
  describeInput(buffer, shape) {
    const [nCols, nOut, nIn] = dims(shape);
    if (buffer === 'w')
      return `[n_out ${nOut}][n_in ${nIn}] raw IEEE halves, little-endian, row-major`;
    if (buffer === 'x')
      return `[n_cols ${nCols}][n_in ${nIn}] raw IEEE halves, little-endian, one column's n_in contiguous`;
    return undefined;
  },
};
