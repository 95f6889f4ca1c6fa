import { GET_ROWS_OUT_OF_RANGE, seedFromString } from '@forge/ir/kernels';
import { scheduleLabel } from './case-labels.js';
import type { ExecutionCase } from './execution-cases.js';

/** The get-rows kernels and the smallest n_embd each takes: a block, or an odd width unblocked. */
export const GET_ROWS_WIDTHS: Readonly<Record<string, number>> = {
  'get-rows-f32': 7,
  'get-rows-f16': 7,
  'get-rows-q8_0': 32,
  'get-rows-q4k': 256,
  'get-rows-q6k': 256,
};

function getRowsCase(
  kernelId: string,
  nVocab: number,
  nEmbd: number,
  nRows: number,
  options: { schedule?: Readonly<Record<string, number>>; outOfRange?: boolean } = {},
): ExecutionCase {
  const schedule = options.schedule ?? {};
  const family = options.outOfRange === true ? ` ${GET_ROWS_OUT_OF_RANGE}` : '';
  const name = `${kernelId} n_vocab=${nVocab} n_embd=${nEmbd} n_rows=${nRows}${family} schedule=${scheduleLabel(schedule)}`;
  return {
    name,
    kernelId,
    schedule,
    shape: { n_vocab: nVocab, n_embd: nEmbd, n_rows: nRows },
    seed: seedFromString(name),
    magnitude: 1,
    ...(options.outOfRange === true ? { family: GET_ROWS_OUT_OF_RANGE } : {}),
    // A lookup reads only the rows its ids name; a one-row table is read whole.
    ...(nVocab > 1 ? { partlyRead: ['table'] } : {}),
  };
}

/**
 * Embedding lookups from every table type: every n_vocab (1, 3, 256), n_embd (one block, or 7
 * unblocked; 4096) and n_rows (1, 3) together; ids name the last row first and row 0 last (see the
 * kernels' generator), and one case per type names ids at and past n_vocab. Workgroups of 32 and
 * 1024 threads besides the default 256.
 */
export const GET_ROWS_CASES: readonly ExecutionCase[] = Object.entries(GET_ROWS_WIDTHS).flatMap(
  ([id, block]) => [
    ...[1, 3, 256].flatMap((nVocab) =>
      [block, 4096].flatMap((nEmbd) =>
        [1, 3].map((nRows) => getRowsCase(id, nVocab, nEmbd, nRows)),
      ),
    ),
    getRowsCase(id, 3, 4096, 1, { schedule: { workgroupSize: 32 } }),
    getRowsCase(id, 256, block, 3, { schedule: { workgroupSize: 1024 } }),
    getRowsCase(id, 3, block, 4, { outOfRange: true }),
  ],
);
