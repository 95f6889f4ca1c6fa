// The catalog entries of `f32-gemv` and `f16-gemv`: shapes, inputs and the float64 reference.
import type { CatalogKernel } from './catalog-kernel.js';
import { denseGemvSpec, VALUES_PER_WORD } from './dense-gemv.js';
import type { DenseType } from './dense-gemv.js';
import { gemvShape, matVec, shapeProblem, shapeSize } from './gemv-catalog.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { lazyKernel } from './lazy-kernel.js';
import { fillUniform } from './random.js';

/**
 * Words the kernel's u32 offsets may run past W's last word: a lane's next 16-byte load (4 steps
 * of 4 vectors of 128 words) and the tail lanes' indices.
 */
const OFFSET_HEADROOM = 4096;

function denseGemv(type: DenseType): CatalogKernel {
  /** W words of a shape: n_out rows of n_in values, one (f32) or two (f16) a word. */
  const wordCount = (nOut: number, nIn: number) => (nOut * nIn) / VALUES_PER_WORD[type];
  return {
    spec: denseGemvSpec(type),
    shapeNames: ['n_in', 'n_out'],
    defaultShape: { n_in: 512, n_out: 64 },
    params: (shape) => ({ n_in: shapeSize(shape, 'n_in'), n_out: shapeSize(shape, 'n_out') }),
    bufferLengths: (shape) => {
      const { nIn, nOut } = gemvShape(shape);
      return { w: Math.ceil(wordCount(nOut, nIn)), x: nIn, y: nOut };
    },
    outputs: ['y'],
    // y = W x in float64 from W's exact values (f32, or the f16 halves of its words).
    reference: (inputs, params) => {
      const { nIn, nOut } = gemvShape(params);
      const w =
        type === 'f32' ? (inputs['w'] ?? []) : unpackF16Words(inputs['w'] ?? [], nOut * nIn);
      return { y: matVec(w, inputs['x'] ?? [], nOut, nIn) };
    },
    // f32 FMAs in a lane-strided order, then a warp tree, against float64: ~1e-13 at n_in 4096.
    tolerance: 1e-10,
    checkShape(shape) {
      const { nIn, nOut } = gemvShape(shape);
      if (!Number.isSafeInteger(nIn) || nIn < 1) shapeProblem('n_in', `${nIn} is not at least 1`);
      if (type === 'f16' && nIn % 2 !== 0)
        shapeProblem('n_in', `${nIn} is not even: f16 rows are whole u32 words of two halves`);
      if (!Number.isSafeInteger(nOut) || nOut < 1)
        shapeProblem('n_out', `${nOut} is not at least 1`);
      if (nOut * nIn > 2 ** 32 - 1 || wordCount(nOut, nIn) > 2 ** 32 - OFFSET_HEADROOM)
        shapeProblem('n_out', `${nOut} rows of ${nIn} ${type} values exceed 32-bit offsets`);
    },
    generateInput({ buffer, length, rng, magnitude }) {
      if (buffer !== 'w' || type === 'f32') return undefined;
      return packF16Words(fillUniform(new Float32Array(2 * length), rng, magnitude));
    },
    describeInput(buffer, shape) {
      if (buffer !== 'w' || type === 'f32') return undefined;
      const { nIn, nOut } = gemvShape(shape);
      return `[n_out ${nOut}][n_in ${nIn}] raw IEEE halves, little-endian, row-major`;
    },
  };
}

/** Catalog kernel `f32-gemv`: y = W x, W f32 [n_out][n_in] row-major, any n_in and n_out. */
export const f32Gemv: CatalogKernel = lazyKernel('f32-gemv', () => denseGemv('f32'));
/** Catalog kernel `f16-gemv`: y = W x, W f16 [n_out][n_in] as u32 words, n_in even. */
export const f16Gemv: CatalogKernel = lazyKernel('f16-gemv', () => denseGemv('f16'));
