// The catalog entry of `q4k-soa-wmma`: shapes, repacked Q4_K weights, f16 X and the float64 reference.
import { dequantize, quantizedBytes } from '../quant/formats.js';
import { repack, unpack } from '../quant/repack.js';
import { packWords, unpackWords } from '../quant/words.js';
import type { CatalogKernel, Shape, WeightStream } from './catalog-kernel.js';
import { randomQ4kWords } from './gemv-catalog.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { Q4K_SOA_WMMA_SPEC } from './q4k-soa-wmma.js';
import { fillUniform } from './random.js';
import {
  checkWmmaColumnOffsets,
  checkWmmaColumns,
  shapeProblem,
  wmmaDims,
  wmmaProduct,
} from './wmma-shape.js';

const BLOCK = 256;
/** Repacked rows of 32·⌈144·nb/32⌉ bytes (LAYOUTS.md); plain arithmetic, safe on bad shapes. */
const layoutBytes = (nOut: number, nIn: number): number =>
  nOut * 32 * Math.ceil((144 * Math.floor(nIn / BLOCK)) / 32);

function checkShape(shape: Shape): void {
  const [nCols, nOut, nIn] = wmmaDims(shape);
  checkWmmaColumns(nCols, nOut);
  if (!Number.isSafeInteger(nIn) || nIn < BLOCK || nIn % BLOCK !== 0)
    shapeProblem('n_in', `${nIn} is not a multiple of ${BLOCK}, the q4_K block size`);
  if (layoutBytes(nOut, nIn) / 4 > 2 ** 32 - 1)
    shapeProblem('n_out', `${nOut} rows of ${nIn} q4_K values exceed 32-bit word offsets`);
  checkWmmaColumnOffsets(nCols, nOut, nIn);
}

/** Y = X·Wᵀ in float64 from the codec's dequantized W and the f16 values of X. */
function reference(
  inputs: Readonly<Record<string, ArrayLike<number>>>,
  params: Readonly<Record<string, number>>,
): Record<string, Float64Array> {
  const dims = wmmaDims(params);
  const [nCols, nOut, nIn] = dims;
  const stored = unpackWords(inputs['w'] ?? [], layoutBytes(nOut, nIn));
  const w = dequantize('q4_K', unpack('q4_K', stored, nOut, nIn), nOut, nIn);
  const x = unpackF16Words(inputs['x'] ?? [], nCols * nIn);
  return { y: wmmaProduct(w, x, dims) };
}

const weights: WeightStream = {
  buffer: 'w',
  type: 'q4_K',
  bytes: (shape) => {
    const [, nOut, nIn] = wmmaDims(shape);
    return layoutBytes(nOut, nIn);
  },
  paddingBytes: (shape) => {
    const [, nOut, nIn] = wmmaDims(shape);
    return layoutBytes(nOut, nIn) - quantizedBytes('q4_K', nOut, nIn);
  },
  fromNative: (native, shape) => {
    const [, nOut, nIn] = wmmaDims(shape);
    return repack('q4_K', native, nOut, nIn);
  },
};

/** Catalog kernel `q4k-soa-wmma`: repacked Q4_K W, f16 X, 1–16 columns, tensor-core mma. */
export const q4kSoaWmma: CatalogKernel = {
  spec: Q4K_SOA_WMMA_SPEC,
  shapeNames: ['n_cols', 'n_out', 'n_in'],
  defaultShape: { n_cols: 4, n_out: 64, n_in: 512 },
  params: (shape) => {
    const [nCols, nOut, nIn] = wmmaDims(shape);
    return { n_cols: nCols, n_out: nOut, n_in: nIn };
  },
  bufferLengths: (shape) => {
    const [nCols, nOut, nIn] = wmmaDims(shape);
    return { w: layoutBytes(nOut, nIn) / 4, x: (nCols * nIn) / 2, y: nCols * nOut };
  },
  outputs: ['y'],
  reference,
  // f16 rounding of the dequantized weights is the only loss the issue allows: 1e-6. The kernel
  // itself multiplies exact nibbles and applies f32 scales, well inside that.
  tolerance: 1e-6,
  checkShape,
  weights,
  generateInput({ buffer, length, shape, rng, magnitude }) {
    const [, nOut, nIn] = wmmaDims(shape);
    if (buffer === 'w')
      return packWords(
        repack(
          'q4_K',
          unpackWords(randomQ4kWords(nOut, nIn, rng, magnitude), quantizedBytes('q4_K', nOut, nIn)),
          nOut,
          nIn,
        ),
      );
    if (buffer !== 'x') return undefined;
    return packF16Words(fillUniform(new Float32Array(2 * length), rng, magnitude));
  },
  describeInput(buffer, shape) {
    const [nCols, nOut, nIn] = wmmaDims(shape);
    if (buffer === 'w')
      return `[n_out ${nOut}] rows of ${nIn / BLOCK} Q4_K blocks repacked structure-of-arrays (LAYOUTS.md)`;
    if (buffer === 'x')
      return `[n_cols ${nCols}][n_in ${nIn}] raw IEEE halves, little-endian, one column's n_in contiguous`;
    return undefined;
  },
};
