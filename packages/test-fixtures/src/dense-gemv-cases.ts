import { seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

/** A dense mat-vec case: `kernelId` (f32-gemv or f16-gemv) at W [nOut][nIn]. */
function denseCase(
  kernelId: 'f32-gemv' | 'f16-gemv',
  nOut: number,
  nIn: number,
  schedule: Readonly<Record<string, number>> = {},
): ExecutionCase {
  const name = `${kernelId} n_out=${nOut} n_in=${nIn} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n_out: nOut, n_in: nIn },
    seed: seedFromString(name),
    magnitude: 1,
  };
}

const f32 = (nOut: number, nIn: number, schedule: Readonly<Record<string, number>> = {}) =>
  denseCase('f32-gemv', nOut, nIn, schedule);
const f16 = (nOut: number, nIn: number, schedule: Readonly<Record<string, number>> = {}) =>
  denseCase('f16-gemv', nOut, nIn, schedule);

/**
 * f32-gemv and f16-gemv: n_out 1, 15, 16, 17 and 256 against n_in 1 (f32), 2, 255 (f32) or 256,
 * 4096 and 11008; rows shorter than a sector (7, 6), rows whose x starts mid-vector (n_in 257, 258
 * for f32, 254 for f16: head, body and tail at every offset); the knobs' edges (32 and 512
 * threads, 1 and 4 vectors a step).
 */
export const DENSE_GEMV_CASES: readonly ExecutionCase[] = [
  f32(1, 1),
  f32(15, 2),
  f32(16, 255),
  f32(17, 256),
  f32(256, 4096),
  f32(17, 11008),
  f32(17, 7),
  f32(256, 257),
  f32(15, 258, { workgroupSize: 512, vectors: 3 }),
  f32(16, 255, { workgroupSize: 32, vectors: 1 }),
  f32(15, 4096, { vectors: 4 }),
  f32(1, 4096, { workgroupSize: 512, vectors: 2 }),
  f16(1, 2),
  f16(15, 256),
  f16(16, 4096),
  f16(17, 254),
  f16(256, 4096),
  f16(17, 11008),
  f16(3, 6),
  f16(16, 256, { workgroupSize: 32, vectors: 1 }),
  f16(15, 4096, { workgroupSize: 512, vectors: 4 }),
];
