import { seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

/** A tensor-core mat-vec case (`kernelId`, wmma-gemv by default): `nCols` columns of X against W [nOut][nIn]. */
function wmmaCase(
  nCols: number,
  nOut: number,
  nIn: number,
  schedule: Readonly<Record<string, number>> = {},
  kernelId = 'wmma-gemv',
): ExecutionCase {
  const name = `${kernelId} n_cols=${nCols} n_out=${nOut} n_in=${nIn} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n_cols: nCols, n_out: nOut, n_in: nIn },
    seed: seedFromString(name),
    magnitude: 1,
  };
}

/**
 * The tensor-core mat-vec: every n_cols (1, 2, 7, 8, 16), n_out (1, 15, 16, 17, 256) and n_in (16,
 * 256, 4096) of issue #14 on every engine (the cross product runs on WebGPU alone, in
 * packages/wgsl/src/wmma-grid.test.ts). Knob edges: 1, 3 and 8 warps; 9 columns at n_in 208
 * and 272 (leftover chunks after the whole rounds, a 16-k half chunk and the second n8 tile
 * together).
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
  wmmaCase(1, 17, 256, { warps: 1 }),
  wmmaCase(7, 15, 256, { warps: 8 }),
  wmmaCase(9, 16, 208),
  wmmaCase(9, 16, 272, { warps: 3 }),
  wmmaCase(1, 256, 4096),
  wmmaCase(8, 256, 4096),
  wmmaCase(16, 256, 4096),
  wmmaCase(7, 17, 4096),
];

const q4k = (
  nCols: number,
  nOut: number,
  nIn: number,
  schedule: Readonly<Record<string, number>> = {},
): ExecutionCase => wmmaCase(nCols, nOut, nIn, schedule, 'q4k-soa-wmma');

/**
 * q4k-soa-wmma: every n_cols, n_out and n_in (256, 4096) of issue #14 on every engine (the cross
 * product on WebGPU in wmma-grid.test.ts), at 1, 3, 4 and 8 warps (odd block counts and pairs past
 * the last block included).
 */
export const Q4K_SOA_WMMA_CASES: readonly ExecutionCase[] = [
  q4k(1, 1, 256),
  q4k(2, 15, 512, { warps: 1 }),
  q4k(7, 17, 256),
  q4k(8, 16, 768, { warps: 8 }),
  q4k(16, 17, 256),
  q4k(2, 256, 4096),
  q4k(16, 15, 4096),
  q4k(9, 16, 1280, { warps: 3 }),
];
