// What the two decode-attention catalog kernels share besides their spec and tolerance.
import { ValidationError } from '../errors.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { quantizeXRows } from './rmsnorm-quantize.js';
import { sdpaGenerateInput, sdpaInputs, type SdpaInputFamily } from './sdpa-inputs.js';
import { sdpaReference } from './sdpa-reference.js';
import {
  SDPA_SHAPE_NAMES,
  checkSdpaShape,
  sdpaBufferLengths,
  sdpaParams,
  type SdpaCache,
} from './sdpa-shape.js';

/** Decode attention's default shape: 8 query heads over 2 KV heads of 128, 257 of 4096 positions. */
export const SDPA_DEFAULT_SHAPE: Shape = {
  n_head: 8,
  n_kv_head: 2,
  head_dim: 128,
  n_kv: 257,
  max_ctx: 4096,
  window: 0,
};

/** The parts of a decode-attention `CatalogKernel` other than its spec and tolerance. */
export type SdpaCatalogParts = Pick<
  CatalogKernel,
  | 'shapeNames'
  | 'defaultShape'
  | 'params'
  | 'bufferLengths'
  | 'outputs'
  | 'reference'
  | 'checkShape'
  | 'generateInput'
  | 'inputFamilies'
  | 'generateFamily'
  | 'describeInput'
>;

/** The input families of decode attention a case may name (see SdpaInputFamily). */
export const SDPA_FAMILIES: readonly SdpaInputFamily[] = [
  'uniform',
  'dominant',
  'equal-scores',
  'large-q',
];

/**
 * Shapes, params (scale 1/√head_dim), buffer lengths, the float64 reference, shape checks and
 * uniform input generation (and the adversarial families, invisible positions poisoned) for decode
 * attention over a `cache` of that type, for a catalog entry
 * to spread next to its spec: buffers `q`, `k`, `v` (inputs, in that order) and `out`.
 */
export function sdpaCatalogParts(cache: SdpaCache): SdpaCatalogParts {
  return {
    shapeNames: SDPA_SHAPE_NAMES,
    defaultShape: SDPA_DEFAULT_SHAPE,
    params: (shape) => sdpaParams(shape),
    bufferLengths: (shape) => sdpaBufferLengths(shape, cache),
    outputs: ['out'],
    reference: sdpaReference(cache),
    checkShape: (shape) => void checkSdpaShape(shape, cache),
    generateInput: sdpaGenerateInput(cache),
    describeInput: (buffer, shape) => {
      if (buffer !== 'k' && buffer !== 'v') return undefined;
      const [positions, heads, dims] = ['max_ctx', 'n_kv_head', 'head_dim'].map((n) => shape[n]);
      const values = cache === 'f16' ? 'raw IEEE halves, little-endian' : 'f32 values';
      return `[max_ctx ${positions}][n_kv_head ${heads}][head_dim ${dims}] ${values}; --shape max_ctx=N sizes the cache`;
    },
    inputFamilies: SDPA_FAMILIES,
    // A named family also fills the positions no query sees with NaN, so a kernel reading one fails.
    generateFamily: ({ family, shape, rng, magnitude }) => {
      const known = SDPA_FAMILIES.find((name) => name === family);
      if (known === undefined)
        throw new ValidationError([
          { path: 'family', message: `'${family}' is not one of ${SDPA_FAMILIES.join(', ')}` },
        ]);
      const options = { cache, rng, magnitude, family: known, poisonInvisible: true };
      return { ...sdpaInputs(shape, options).buffers };
    },
  };
}

/**
 * The parts that differ for a kernel whose combine also quantizes out (sdpa-decode-quantize): the
 * x_quant and x_factors buffers and their reference, the row-streaming mat-vecs' quantization of
 * the float64 out, with add-rmsnorm-quantize's tolerance for words a rounding tie moves.
 */
export function sdpaQuantizedParts(
  parts: SdpaCatalogParts,
): Pick<CatalogKernel, 'bufferLengths' | 'outputs' | 'reference' | 'outputTolerance'> {
  const values = (shape: Shape): number => (shape['n_head'] ?? 0) * (shape['head_dim'] ?? 0);
  return {
    bufferLengths: (shape) => ({
      ...parts.bufferLengths(shape),
      x_quant: values(shape) / 2,
      x_factors: (values(shape) / 32) * 5,
    }),
    outputs: ['out', 'x_quant', 'x_factors'],
    reference(inputs, params) {
      const { out } = parts.reference(inputs, params);
      if (out === undefined) throw new Error('sdpa: the reference computes no out');
      return { out, ...quantizeXRows(out, values(params), 1) };
    },
    outputTolerance: { x_quant: 1e-4 },
  };
}
