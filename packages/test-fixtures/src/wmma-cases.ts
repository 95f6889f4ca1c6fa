import { seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

/** A wmma-gemv (or q4k-soa-wmma) case: `nCols` columns of X against W [nOut][nIn]. */
function wmmaCase(
  nCols: number,
  nOut: number,
  nIn: number,
  options: {
    schedule?: Readonly<Record<string, number>>;
    engines?: ExecutionCase['engines'];
    kernelId?: string;
  } = {},
): ExecutionCase {
  const schedule = options.schedule ?? {};
  const kernelId = options.kernelId ?? 'wmma-gemv';
  const name = `${kernelId} n_cols=${nCols} n_out=${nOut} n_in=${nIn} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n_cols: nCols, n_out: nOut, n_in: nIn },
    seed: seedFromString(name),
    magnitude: 1,
    ...(options.engines === undefined ? {} : { engines: options.engines }),
  };
}

const NOT_WEBGPU: ExecutionCase['engines'] = ['interpreter', 'ptx-sim'];

/**
 * The tensor-core mat-vec: every n_cols (1, 2, 7, 8, 16), n_out (1, 15, 16, 17, 256) and n_in (16,
 * 256, 4096) of issue #14 on every engine, not their cross product (256 × 4096 at 1, 8 and 16
 * columns: WebGPU's mma lowering takes ~0.5 s a case there). Knob edges: 1 and 8 warps; 9 columns
 * at n_in 208 (leftover chunks after the whole rounds, a 16-k half chunk and the second n8 tile
 * together), and the same at 3 warps off WebGPU: with the `subgroups` feature enabled, Dawn on
 * lavapipe takes minutes for a dispatch of this kernel at 2, 3, 5, 6 or 7 warps (225 s for one
 * tile at n_in 32, 2 warps; right results), under 50 ms at 1, 4 and 8 warps or without the feature.
 */
export const WMMA_GEMV_CASES: readonly ExecutionCase[] = [
  wmmaCase(1, 1, 16),
  wmmaCase(2, 15, 256),
  wmmaCase(7, 17, 16),
  wmmaCase(8, 16, 256),
  wmmaCase(16, 17, 256),
  wmmaCase(16, 1, 16),
  wmmaCase(2, 15, 4096),
  wmmaCase(8, 256, 16),
  wmmaCase(1, 17, 256, { schedule: { warps: 1 } }),
  wmmaCase(7, 15, 256, { schedule: { warps: 8 } }),
  wmmaCase(9, 16, 208),
  wmmaCase(9, 16, 272, { schedule: { warps: 3 }, engines: NOT_WEBGPU }),
  wmmaCase(1, 256, 4096),
  wmmaCase(8, 256, 4096),
  wmmaCase(16, 256, 4096),
  wmmaCase(7, 17, 4096),
];

const q4k = (
  nCols: number,
  nOut: number,
  nIn: number,
  options: { schedule?: Readonly<Record<string, number>>; engines?: ExecutionCase['engines'] } = {},
): ExecutionCase =>
  wmmaCase(nCols, nOut, nIn, { engines: NOT_WEBGPU, ...options, kernelId: 'q4k-soa-wmma' });

/**
 * q4k-soa-wmma: every n_cols, n_out and n_in (256, 4096) of issue #14 on the interpreter and the
 * simulator, at 1, 3, 4 and 8 warps (odd block counts and pairs past the last block included). Not
 * yet on WebGPU: a case there ran past the suite's 60 s on lavapipe (the same 1 × 1 × 256 run
 * through `forge run --target wgsl` took 4 s with a warm shader cache); open.
 */
export const Q4K_SOA_WMMA_CASES: readonly ExecutionCase[] = [
  q4k(1, 1, 256),
  q4k(2, 15, 512, { schedule: { warps: 1 } }),
  q4k(7, 17, 256),
  q4k(8, 16, 768, { schedule: { warps: 8 } }),
  q4k(16, 17, 256),
  q4k(2, 256, 4096),
  q4k(16, 15, 4096),
  q4k(9, 16, 1280, { schedule: { warps: 3 } }),
];
