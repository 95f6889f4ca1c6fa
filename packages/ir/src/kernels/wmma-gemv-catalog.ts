// The catalog entry of `wmma-gemv`: shapes, f16 inputs and the float64 reference.
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { fillUniform } from './random.js';
import { WMMA_GEMV_SPEC } from './wmma-gemv.js';
import {
  checkWmmaColumnOffsets,
  checkWmmaColumns,
  shapeProblem,
  wmmaDims,
  wmmaProduct,
} from './wmma-shape.js';

export { WMMA_MAX_COLS } from './wmma-shape.js';

/** Throws a ValidationError naming the first shape field `wmma-gemv` cannot run. */
function checkShape(shape: Shape): void {
  const [nCols, nOut, nIn] = wmmaDims(shape);
  checkWmmaColumns(nCols, nOut);
  if (!Number.isSafeInteger(nIn) || nIn < 16 || nIn % 16 !== 0)
    shapeProblem('n_in', `${nIn} is not a multiple of 16, the mma's K`);
  // u32 word offsets of rows up to the last tile's (n_out rounded up to 16 rows).
  if ((Math.ceil(nOut / 16) * 16 * nIn) / 2 > 2 ** 32 - 1)
    shapeProblem('n_out', `${nOut} rows of ${nIn} halves exceed 32-bit word offsets`);
  checkWmmaColumnOffsets(nCols, nOut, nIn);
}

/** Y = X·Wᵀ in float64 from the f16 values of W [n_out][n_in] and X [n_cols][n_in]. */
function reference(
  inputs: Readonly<Record<string, ArrayLike<number>>>,
  params: Readonly<Record<string, number>>,
): Record<string, Float64Array> {
  const dims = wmmaDims(params);
  const [nCols, nOut, nIn] = dims;
  const w = unpackF16Words(inputs['w'] ?? [], nOut * nIn);
  const x = unpackF16Words(inputs['x'] ?? [], nCols * nIn);
  return { y: wmmaProduct(w, x, dims) };
}

/** Catalog kernel `wmma-gemv`: f16 W and X, 1–16 columns, tensor-core mma. */
export const wmmaGemv: CatalogKernel = {
  spec: WMMA_GEMV_SPEC,
  shapeNames: ['n_cols', 'n_out', 'n_in'],
  defaultShape: { n_cols: 4, n_out: 64, n_in: 512 },
  params: (shape) => {
    const [nCols, nOut, nIn] = wmmaDims(shape);
    return { n_cols: nCols, n_out: nOut, n_in: nIn };
  },
  bufferLengths: (shape) => {
    const [nCols, nOut, nIn] = wmmaDims(shape);
    return { w: (nOut * nIn) / 2, x: (nCols * nIn) / 2, y: nCols * nOut };
  },
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
    const [nCols, nOut, nIn] = wmmaDims(shape);
    if (buffer === 'w')
      return `[n_out ${nOut}][n_in ${nIn}] raw IEEE halves, little-endian, row-major`;
    if (buffer === 'x')
      return `[n_cols ${nCols}][n_in ${nIn}] raw IEEE halves, little-endian, one column's n_in contiguous`;
    return undefined;
  },
};
