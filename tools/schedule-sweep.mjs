// Assembles every catalog kernel at every in-bounds PTX schedule (the cross product of every
// knob's values) on every PTX arch with ptxas, and reports registers, spills and failures. A
// kernel's schedule bounds promise that each of these compiles without spilling; this checks it.
//
//   pnpm sweep:schedules [--kernel ID]... [--arch sm_XX]... [--concurrency N]
//
// Prints one row per (kernel, arch) and a line per spilling or failing schedule; exit 1 when any
// schedule spills or fails, 2 for a usage error. Needs a build (`pnpm build`) and ptxas on PATH.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { formatSchedule, knobBounds, knobValueProblem, ready } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { PTX_ARCHS, emitPtx, ptxTarget } from '@forge/ptx';
import { assemblePtxAsync } from '@forge/ptx/ptxas';
import { mulberry32 } from './mulberry32.mjs';
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
 * A schedule's neighbourhood of edges: each knob at its two lowest values, its default and its two
 * highest with the other knobs at their defaults, plus every knob lowest and every knob highest.
 */
export function edgeSchedules(spec) {
  const defaults = Object.fromEntries(spec.schedule.map((knob) => [knob.name, knob.default]));
  const schedules = [defaults];
  for (const knob of spec.schedule) {
    const values = ptxKnobValues(knob);
    for (const value of [...values.slice(0, 2), ...values.slice(-2)])
      schedules.push({ ...defaults, [knob.name]: value });
  }
  const corner = (pick) =>
    Object.fromEntries(spec.schedule.map((knob) => [knob.name, pick(ptxKnobValues(knob))]));
  schedules.push(
    corner((values) => values[0]),
    corner((values) => values.at(-1)),
  );
  return unique(schedules);
}

/** `count` distinct in-bounds schedules of a spec drawn by a seeded generator (all if fewer). */
export function sampledSchedules(spec, count, seed) {
  const pool = ptxSchedules(spec);
  const random = mulberry32(seed);
  // A partial Fisher-Yates shuffle: the first `count` entries are the sample.
  for (let index = 0; index < Math.min(count, pool.length); index++) {
    const pick = index + Math.floor(random() * (pool.length - index));
    [pool[index], pool[pick]] = [pool[pick], pool[index]];
  }
  return pool.slice(0, count);
}

/**
 * The quick sweep `pnpm test` runs: every kernel's edge schedules on every arch, plus `perArch`
 * seeded random schedules per (kernel, arch) and each `workgroupSizes` value the kernel's bounds
 * allow (other knobs at default).
 */
export function quickCases({ seed = 10, perArch = 3, workgroupSizes = [] } = {}) {
  return [...CATALOG.values()].flatMap(({ spec }, kernelIndex) => {
    const defaults = Object.fromEntries(spec.schedule.map((knob) => [knob.name, knob.default]));
    const sizes = spec.schedule.find((knob) => knob.name === 'workgroupSize');
    const extra =
      sizes === undefined
        ? []
        : workgroupSizes
            .filter((size) => ptxKnobValues(sizes).includes(size))
            .map((size) => ({ ...defaults, workgroupSize: size }));
    const fixed = unique([...edgeSchedules(spec), ...extra]);
    return PTX_ARCHS.flatMap((arch, archIndex) => {
      const sampled = sampledSchedules(spec, perArch, seed * 1009 + kernelIndex * 31 + archIndex);
      return unique([...fixed, ...sampled]).map((schedule) => ({
        kernelId: spec.id,
        schedule,
        arch,
      }));
    });
  });
}

const unique = (schedules) => [
  ...new Map(schedules.map((schedule) => [formatSchedule(schedule), schedule])).values(),
];

/**
 * Emits and assembles each case (its `spec`, else the catalog kernel's), `concurrency` ptxas
 * processes at a time. A case gets `registers`,
 * `spillBytes` (stores + loads) and `outcome`: 'clean', 'spill', 'ptxas-error' or 'emit-error'
 * (an in-bounds schedule the emitter refused), with `detail` for the last two.
 */
export async function runSweep(cases, { concurrency = 2 } = {}) {
  await ready();
  return mapLimit(cases, concurrency, runCase);
}

async function runCase(testCase) {
  const { kernelId, schedule, arch } = testCase;
  let source;
  try {
    const spec = testCase.spec ?? CATALOG.get(kernelId).spec;
    source = emitPtx(spec, schedule, ptxTarget(arch)).source;
  } catch (error) {
    return { ...testCase, outcome: 'emit-error', detail: error.message };
  }
  const report = await assemblePtxAsync(source, arch);
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
  'usage: node tools/schedule-sweep.mjs [--kernel ID]... [--arch sm_XX]... [--concurrency N] (default: every catalog kernel on every PTX arch, 2 ptxas at a time)';

/** The options, or `help` for -h / --help (usage on stdout, exit 0). */
export function parseArguments(argv) {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  const options = { kernels: [], archs: [], concurrency: 2 };
  for (let index = 0; index < argv.length; index += 2) {
    const [flag, value] = [argv[index], argv[index + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--kernel' && CATALOG.has(value)) options.kernels.push(value);
    else if (flag === '--arch' && PTX_ARCHS.includes(value)) options.archs.push(value);
    else if (flag === '--concurrency' && /^[1-9]\d{0,2}$/.test(value))
      options.concurrency = Number(value);
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
  const results = await runSweep(cases, { concurrency: options.concurrency });
  const seconds = ((performance.now() - start) / 1000).toFixed(1);
  const counts = countOutcomes(results);
  console.log(formatSweep(results));
  console.log(
    `${results.length} schedules assembled (${options.concurrency} at a time, ${seconds} s): ` +
      `${counts.clean} clean, ${counts.spill} spilling, ${counts['ptxas-error']} rejected by ptxas, ` +
      `${counts['emit-error']} refused by the emitter`,
  );
  return counts.clean === results.length ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main();
