import { ForgeError } from '../errors.js';
import { affineF32 } from './affine-f32.js';
import { argmax } from './argmax.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { catalogIdOf } from './lazy-kernel.js';
import { getRowsF16, getRowsF32, getRowsQ4k, getRowsQ6k, getRowsQ8_0 } from './get-rows-catalog.js';
import { addF32, siluMul } from './elementwise.js';
import { f16Gemv, f32Gemv } from './dense-gemv-catalog.js';
import { kvStore, kvStoreF32 } from './kv-store.js';
import { q4kGemv, q4kSwigluGemv } from './q4k-gemv.js';
import { q4kSoaWmma } from './q4k-soa-wmma-catalog.js';
import { q6kGemv } from './q6k-gemv.js';
import { q6kSoaGemv } from './q6k-soa-gemv.js';
import { q8_0Gemv } from './q8-0-gemv.js';
import { addRmsnorm, rmsnorm } from './rmsnorm.js';
import { addRmsnormQuantize } from './rmsnorm-quantize.js';
import { rope } from './rope.js';
import { ropeKvStore, ropeKvStoreF32 } from './rope-kv-store.js';
import { sdpaDecode, sdpaDecodeF32, sdpaDecodeQuantize } from './sdpa-decode.js';
import { wmmaGemv } from './wmma-gemv-catalog.js';

/** The reference kernels, by id, in listing order. */
export const CATALOG: ReadonlyMap<string, CatalogKernel> = new Map(
  [
    affineF32,
    rmsnorm,
    q8_0Gemv,
    q4kGemv,
    q6kGemv,
    q6kSoaGemv,
    sdpaDecode,
    sdpaDecodeF32,
    wmmaGemv,
    q4kSoaWmma,
    rope,
    getRowsF32,
    getRowsF16,
    getRowsQ8_0,
    getRowsQ4k,
    getRowsQ6k,
    addF32,
    siluMul,
    argmax,
    f32Gemv,
    f16Gemv,
    kvStore,
    kvStoreF32,
    addRmsnorm,
    q4kSwigluGemv,
    addRmsnormQuantize,
    ropeKvStore,
    ropeKvStoreF32,
    sdpaDecodeQuantize,
  ].map((kernel) => [catalogIdOf(kernel), kernel]),
);

/** Thrown for an id the catalog does not have; a user's mistake, so a ForgeError. */
export class UnknownKernelError extends ForgeError {
  override readonly name = 'UnknownKernelError';
  constructor(readonly kernelId: string) {
    super(`unknown kernel '${kernelId}' (known: ${[...CATALOG.keys()].join(', ')})`);
  }
}

/**
 * The catalog kernel `id`; throws UnknownKernelError (a ForgeError listing the known ids) for any
 * other.
 */
export function getKernel(id: string): CatalogKernel {
  const kernel = CATALOG.get(id);
  if (kernel === undefined) throw new UnknownKernelError(id);
  return kernel;
}
