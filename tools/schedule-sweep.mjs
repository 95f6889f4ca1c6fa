// Assembles every catalog kernel at every in-bounds PTX schedule (the cross product of every
// knob's values) on every PTX arch with ptxas, and reports registers, spills and failures. A
// kernel's schedule bounds promise that each of these compiles without spilling; this checks it.
//
//   pnpm sweep:schedules [--kernel ID]... [--arch sm_XX]... [--concurrency N] [--batch N]
//
// Prints one row per (kernel, arch) and a line per spilling or failing schedule; exit 1 when any
// schedule spills or fails, 2 for a usage error. Needs a build (`pnpm build`) and ptxas on PATH.
// `pnpm test:full` runs the whole sweep (schedule-sweep.test.mjs).
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { formatSchedule, knobBounds, knobValueProblem, ready } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { PTX_ARCHS, emitPtx, ptxTarget } from '@forge/ptx';
import { assemblePtxBatchAsync } from '@forge/ptx/ptxas';
import { mapLimit } from './map-limit.mjs';

/** The values a knob's bounds allow, ascending. */
export function knobValues(bounds) {
  const values = [];
  for (let value = bounds.min; value <= bounds.max; value++)
    if (knobValueProblem(value, bounds) === undefined) values.push(value);
  return values;
}

/** A knob's values for `kind` (ptx, wgsl): those its bounds allow, or its default alone without. */
export function kindKnobValues(knob, kind) {
  const bounds = knobBounds(knob.bounds, kind);
  return bounds === undefined ? [knob.default] : knobValues(bounds);
}

/** The PTX values of a knob: those its `ptx` bounds allow, or its default alone when it has none. */
export const ptxKnobValues = (knob) => kindKnobValues(knob, 'ptx');

/** Every in-bounds schedule of a spec for `kind`: the cross product of its knobs' values. */
export function kindSchedules(spec, kind) {
  let schedules = [{}];
  for (const knob of spec.schedule) {
    const values = kindKnobValues(knob, kind);
    schedules = schedules.flatMap((schedule) =>
      values.map((value) => ({ ...schedule, [knob.name]: value })),
    );
  }
  return schedules;
}

/** Every in-bounds PTX schedule of a spec: the cross product of its knobs' values. */
export const ptxSchedules = (spec) => kindSchedules(spec, 'ptx');

/** The sweep's cases: catalog kernel × in-bounds schedule × arch, in catalog order. */
export function sweepCases({ kernels = [...CATALOG.keys()], archs = PTX_ARCHS } = {}) {
  return kernels.flatMap((kernelId) =>
    ptxSchedules(CATALOG.get(kernelId).spec).flatMap((schedule) =>
      archs.map((arch) => ({ kernelId, schedule, arch })),
    ),
  );
}

/**
 * How many schedules one ptxas run assembles: its start-up (~47 ms) was half of an average
 * schedule's time, and a batch of 16 heavy kernels still takes only seconds.
 */
export const SWEEP_BATCH = 16;

/**
 * Emits and assembles each case (its `spec`, else the catalog kernel's), `concurrency` ptxas
 * processes at a time, each assembling up to `batch` cases of one arch (assemblePtxBatchAsync: the
 * same figures as one at a time, a failure re-run alone). A case gets `registers`,
 * `spillBytes` (stores + loads) and `outcome`: 'clean', 'spill', 'ptxas-error' or 'emit-error'
 * (an in-bounds schedule the emitter refused), with `detail` for the last two.
 */
export async function runSweep(cases, { concurrency = 2, batch = SWEEP_BATCH } = {}) {
  await ready();
  const batches = sweepBatches(cases, batch);
  const results = new Array(cases.length);
  await mapLimit(batches, concurrency, async (indices) => {
    const batchResults = await runBatch(indices.map((index) => cases[index]));
    indices.forEach((index, position) => (results[index] = batchResults[position]));
  });
  return results;
}

/** The cases' indices cut into batches of up to `size`, each of one arch, in the cases' order. */
export function sweepBatches(cases, size) {
  const byArch = new Map();
  cases.forEach((testCase, index) => {
    if (!byArch.has(testCase.arch)) byArch.set(testCase.arch, []);
    byArch.get(testCase.arch).push(index);
  });
  return [...byArch.values()].flatMap((indices) =>
    Array.from({ length: Math.ceil(indices.length / size) }, (_, batchIndex) =>
      indices.slice(batchIndex * size, (batchIndex + 1) * size),
    ),
  );
}

/** Emits a batch's cases (all of one arch) and assembles those that emit in one ptxas batch. */
async function runBatch(batchCases) {
  const emitted = batchCases.map((testCase) => {
    try {
      const spec = testCase.spec ?? CATALOG.get(testCase.kernelId).spec;
      return { source: emitPtx(spec, testCase.schedule, ptxTarget(testCase.arch)).source };
    } catch (error) {
      return { error };
    }
  });
  const sources = emitted.filter((item) => item.source !== undefined).map((item) => item.source);
  const reports = await assemblePtxBatchAsync(sources, batchCases[0].arch);
  let next = 0;
  return batchCases.map((testCase, index) => {
    const { error } = emitted[index];
    if (error !== undefined) return { ...testCase, outcome: 'emit-error', detail: error.message };
    return caseResult(testCase, reports[next++]);
  });
}

/** A case's result from ptxas's report on its module. */
function caseResult(testCase, report) {
  if (!report.ok) {
    const detail = report.diagnostics.split('\n')[0] ?? 'ptxas failed';
    return { ...testCase, outcome: 'ptxas-error', detail };
  }
  const spillBytes = report.spillStores + report.spillLoads;
  return {
    ...testCase,
    registers: report.registers,
    spillBytes,
    outcome: spillBytes > 0 ? 'spill' : 'clean',
    ...(spillBytes > 0 ? { detail: report.resources } : {}),
  };
}

/** Outcome counts over results. */
export function countOutcomes(results) {
  const counts = { clean: 0, spill: 0, 'ptxas-error': 0, 'emit-error': 0 };
  for (const result of results) counts[result.outcome]++;
  return counts;
}

/** The report: a row per (kernel, arch), then every case that is not clean. */
export function formatSweep(results) {
  const groups = new Map();
  for (const result of results) {
    const key = `${result.kernelId}\0${result.arch}`;
    groups.set(key, [...(groups.get(key) ?? []), result]);
  }
  const header = ['kernel', 'arch', 'schedules', 'registers', 'spilling', 'failing'];
  const rows = [...groups.values()].map((group) => {
    const registers = group.map((r) => r.registers).filter((r) => r !== undefined);
    const range =
      registers.length === 0 ? '-' : `${Math.min(...registers)}-${Math.max(...registers)}`;
    const counts = countOutcomes(group);
    return [
      group[0].kernelId,
      group[0].arch,
      String(group.length),
      range,
      String(counts.spill),
      String(counts['ptxas-error'] + counts['emit-error']),
    ];
  });
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => row[column].length)),
  );
  const line = (row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ');
  const problems = results
    .filter((result) => result.outcome !== 'clean')
    .map(
      (r) =>
        `${r.outcome.toUpperCase()} ${r.kernelId} ${r.arch} ${formatSchedule(r.schedule)}: ${r.detail}`,
    );
  return [line(header), ...rows.map(line), ...problems].join('\n');
}

const USAGE =
  'usage: node tools/schedule-sweep.mjs [--kernel ID]... [--arch sm_XX]... [--concurrency N] [--batch N] (default: every catalog kernel on every PTX arch, 2 ptxas at a time, 16 schedules a ptxas run)';

/** The options, or `help` for -h / --help (usage on stdout, exit 0). */
export function parseArguments(argv) {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  const options = { kernels: [], archs: [], concurrency: 2, batch: SWEEP_BATCH };
  for (let index = 0; index < argv.length; index += 2) {
    const [flag, value] = [argv[index], argv[index + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--kernel' && CATALOG.has(value)) options.kernels.push(value);
    else if (flag === '--arch' && PTX_ARCHS.includes(value)) options.archs.push(value);
    else if (flag === '--concurrency' && /^[1-9]\d{0,2}$/.test(value))
      options.concurrency = Number(value);
    else if (flag === '--batch' && /^[1-9]\d{0,2}$/.test(value)) options.batch = Number(value);
    else throw new Error(`unknown option or value: ${flag} ${value}`);
  }
  return options;
}

async function main() {
  let options;
  try {
    options = parseArguments(process.argv.slice(2));
  } catch (error) {
    console.error(`schedule-sweep: ${error.message}; ${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  const cases = sweepCases({
    ...(options.kernels.length > 0 ? { kernels: options.kernels } : {}),
    ...(options.archs.length > 0 ? { archs: options.archs } : {}),
  });
  const start = performance.now();
  const results = await runSweep(cases, {
    concurrency: options.concurrency,
    batch: options.batch,
  });
  const seconds = ((performance.now() - start) / 1000).toFixed(1);
  const counts = countOutcomes(results);
  console.log(formatSweep(results));
  console.log(
    `${results.length} schedules assembled (${options.concurrency} at a time, ` +
      `${options.batch} a ptxas run, ${seconds} s): ` +
      `${counts.clean} clean, ${counts.spill} spilling, ${counts['ptxas-error']} rejected by ptxas, ` +
      `${counts['emit-error']} refused by the emitter`,
  );
  return counts.clean === results.length ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main();
