// The catalog entries of `f32-gemv` and `f16-gemv`: shapes, inputs and the float64 reference.
import { ValidationError } from '../errors.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { lazyKernel } from './lazy-kernel.js';
import { denseGemvSpec, VALUES_PER_WORD, type DenseType } from './dense-gemv.js';
import { packF16Words, unpackF16Words } from './half-words.js';
import { fillUniform } from './random.js';

const size = (shape: Shape, name: string): number => shape[name] ?? 0;
/**
 * Words the kernel's u32 offsets may run past W's last word: a lane's next 16-byte load (4 steps
 * of 4 vectors of 128 words) and the tail lanes' indices.
 */
const OFFSET_HEADROOM = 4096;

/** W words of a shape: n_out rows of n_in values, one (f32) or two (f16) a word. */
const wordCount = (type: DenseType, nOut: number, nIn: number): number =>
  (nOut * nIn) / VALUES_PER_WORD[type];

/** Throws a ValidationError naming the first shape field the kernel cannot run. */
function checkShape(type: DenseType, shape: Shape): void {
  const [nIn, nOut] = [size(shape, 'n_in'), size(shape, 'n_out')];
  const problem = (path: string, message: string): never => {
    throw new ValidationError([{ path, message }]);
  };
  if (!Number.isSafeInteger(nIn) || nIn < 1) problem('n_in', `${nIn} is not at least 1`);
  if (type === 'f16' && nIn % 2 !== 0)
    problem('n_in', `${nIn} is not even: f16 rows are whole u32 words of two halves`);
  if (!Number.isSafeInteger(nOut) || nOut < 1) problem('n_out', `${nOut} is not at least 1`);
  if (nOut * nIn > 2 ** 32 - 1 || wordCount(type, nOut, nIn) > 2 ** 32 - OFFSET_HEADROOM)
    problem('n_out', `${nOut} rows of ${nIn} ${type} values exceed 32-bit offsets`);
}

/** y = W x in float64 from W's exact values (f32, or the f16 halves of its words). */
function reference(
  type: DenseType,
  inputs: Readonly<Record<string, ArrayLike<number>>>,
  params: Readonly<Record<string, number>>,
): Record<string, Float64Array> {
  const [nIn, nOut] = [size(params, 'n_in'), size(params, 'n_out')];
  const w = type === 'f32' ? (inputs['w'] ?? []) : unpackF16Words(inputs['w'] ?? [], nOut * nIn);
  const x = inputs['x'] ?? [];
  const y = new Float64Array(nOut);
  for (let r = 0; r < nOut; r++) {
    let dot = 0;
    for (let k = 0; k < nIn; k++) dot += (w[r * nIn + k] ?? 0) * (x[k] ?? 0);
    y[r] = dot;
  }
  return { y };
}

function denseGemv(type: DenseType): CatalogKernel {
  return {
    spec: denseGemvSpec(type),
    shapeNames: ['n_in', 'n_out'],
    defaultShape: { n_in: 512, n_out: 64 },
    params: (shape) => ({ n_in: size(shape, 'n_in'), n_out: size(shape, 'n_out') }),
    bufferLengths: (shape) => ({
      w: Math.ceil(wordCount(type, size(shape, 'n_out'), size(shape, 'n_in'))),
      x: size(shape, 'n_in'),
      y: size(shape, 'n_out'),
    }),
    outputs: ['y'],
    reference: (inputs, params) => reference(type, inputs, params),
    // f32 FMAs in a lane-strided order, then a warp tree, against float64: ~1e-13 at n_in 4096.
    tolerance: 1e-10,
    checkShape: (shape) => checkShape(type, shape),
    generateInput({ buffer, length, rng, magnitude }) {
      if (buffer !== 'w' || type === 'f32') return undefined;
      return packF16Words(fillUniform(new Float32Array(2 * length), rng, magnitude));
    },
    describeInput(buffer, shape) {
      if (buffer !== 'w' || type === 'f32') return undefined;
      const [nIn, nOut] = [size(shape, 'n_in'), size(shape, 'n_out')];
      return `[n_out ${nOut}][n_in ${nIn}] raw IEEE halves, little-endian, row-major`;
    },
    // Pins the edge schedules, so a change in the unrolled step or the group size shows in a diff.
    goldenSchedules: { ptx: [{ vectors: 1, workgroupSize: 32 }, { vectors: 4 }] },
  };
}

/** Catalog kernel `f32-gemv`: y = W x, W f32 [n_out][n_in] row-major, any n_in and n_out. */
export const f32Gemv: CatalogKernel = lazyKernel('f32-gemv', () => denseGemv('f32'));
/** Catalog kernel `f16-gemv`: y = W x, W f16 [n_out][n_in] as u32 words, n_in even. */
export const f16Gemv: CatalogKernel = lazyKernel('f16-gemv', () => denseGemv('f16'));
