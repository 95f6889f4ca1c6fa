import type { QuantType } from './formats.js';

/** Values (`blockSize`) and bytes (`blockBytes`) per block of one GGUF block format. */
export interface BlockGeometry {
  readonly blockSize: number;
  readonly blockBytes: number;
}

/**
 * Block geometry of every QuantType: the one table the codecs, QUANT_FORMATS and the gemv kernels
 * read (a codec cannot import QUANT_FORMATS, which imports the codecs).
 */
export const BLOCK_GEOMETRY = {
  q4_0: { blockSize: 32, blockBytes: 18 },
  q8_0: { blockSize: 32, blockBytes: 34 },
  q4_K: { blockSize: 256, blockBytes: 144 },
  q6_K: { blockSize: 256, blockBytes: 210 },
} as const satisfies Readonly<Record<QuantType, BlockGeometry>>;
