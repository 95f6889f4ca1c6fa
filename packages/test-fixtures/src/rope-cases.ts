import { seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

interface RopeCaseOptions {
  readonly maxCtx?: number;
  readonly neox?: boolean;
  readonly schedule?: Readonly<Record<string, number>>;
}

/**
 * A rope case: `nHead`/`nKvHead` heads of `headDim` rotated at `pos` of a `maxCtx`-row table
 * (pos + 1 rows by default). The kernel reads one row of the table, so `cos_sin` is partly read.
 */
function ropeCase(
  nHead: number,
  nKvHead: number,
  headDim: number,
  pos: number,
  options: RopeCaseOptions = {},
): ExecutionCase {
  const { maxCtx = pos + 1, neox = false } = options;
  const schedule = options.schedule ?? {};
  const name = `rope heads=${nHead}/${nKvHead} head_dim=${headDim} pos=${pos} max_ctx=${maxCtx} mode=${neox ? 'neox' : 'normal'} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId: 'rope',
    schedule,
    shape: {
      n_head: nHead,
      n_kv_head: nKvHead,
      head_dim: headDim,
      pos,
      max_ctx: maxCtx,
      neox: neox ? 1 : 0,
    },
    seed: seedFromString(name),
    magnitude: 1,
    partlyRead: ['cos_sin'],
  };
}

/**
 * rope: positions 1, 17 and 4095 (the last row of a 4096 table) in both modes, head_dim 64 and
 * 128, GQA 32/8 and odd head counts 3/1; position 0 (the identity) once; head_dim 2 and 80 (not a
 * power of two); 32 and 1024 threads (fewer threads than pairs, and more).
 */
export const ROPE_CASES: readonly ExecutionCase[] = [
  ...[false, true].flatMap((neox) => [
    ropeCase(32, 8, 128, 1, { neox }),
    ropeCase(32, 8, 128, 17, { neox, maxCtx: 4096 }),
    ropeCase(32, 8, 128, 4095, { neox, maxCtx: 4096 }),
    ropeCase(3, 1, 64, 17, { neox, maxCtx: 32 }),
    ropeCase(3, 1, 128, 4095, { neox }),
    ropeCase(32, 8, 64, 1000, { neox, maxCtx: 2048 }),
  ]),
  ropeCase(3, 1, 64, 0, { maxCtx: 8 }),
  ropeCase(1, 1, 2, 5),
  ropeCase(5, 5, 80, 300, { neox: true, maxCtx: 512 }),
  ropeCase(32, 8, 128, 255, { schedule: { workgroupSize: 32 } }),
  ropeCase(3, 1, 64, 77, { neox: true, schedule: { workgroupSize: 1024 } }),
];
