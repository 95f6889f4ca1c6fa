// The PTX campaign: mutated PTX through `forge sim` until a count or a time limit, tallied per
// outcome, the failing cases grouped by outcome and message signature like the spec campaign.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { messageSignature } from './campaign.mjs';
import { ptxCase } from './ptx-mutants.mjs';
import {
  BOUNDS,
  PTX_FAILURES,
  PTX_OUTCOMES,
  classify,
  runChild,
  runInProcess,
} from './ptx-runner.mjs';

/** A rejection's kind: the limit it names, else its message's shape without the line number. */
export function rejectionKind(message) {
  const limit = /SIMULATOR_LIMITS\.(\w+)/.exec(message)?.[1];
  if (limit !== undefined) return `limit:${limit}`;
  const reason = message
    .replace(/^forge sim: /, '')
    .replace(/^line \d+: /, '')
    .replace(/^entry '[^']*' cannot run: /, '')
    .replace(/^entry [\w$]+ /, 'entry … ')
    .replace(/%[A-Za-z_$][\w$.]*/g, '%…')
    .replace(/\S{40,}/g, '…');
  return messageSignature(reason).replace(/:.*$/, '').slice(0, 60);
}

/**
 * Runs cases `0, 1, …` of `seed` until `numRuns` or `timeLimitMs`, `jobs` at a time, as child
 * processes (`mode: 'child'`, bounded) or through runCli here (`'in-process'`). Returns the counts
 * per outcome (plus `tried`), failing groups (each with its count, tags and smallest case),
 * rejections by kind, the slowest case and the largest peak RSS.
 */
export async function runPtxCampaign({
  seed,
  numRuns = 1e9,
  timeLimitMs,
  jobs = 1,
  mode = 'child',
  bounds = BOUNDS,
  onProgress,
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-ptx-fuzz-'));
  const counts = Object.fromEntries([
    ['tried', 0],
    ...[...PTX_OUTCOMES, ...PTX_FAILURES].map((o) => [o, 0]),
  ]);
  const groups = new Map();
  const info = {
    rejections: new Map(),
    slowest: { ms: 0, tags: [] },
    peak: { bytes: 0, tags: [] },
  };
  const started = Date.now();
  let next = 0;
  const more = () =>
    next < numRuns && (timeLimitMs === undefined || Date.now() - started < timeLimitMs);
  const worker = async () => {
    while (more()) {
      const fuzzCase = ptxCase(seed, next++);
      const run =
        mode === 'child'
          ? await runChild(fuzzCase, dir, bounds)
          : await runInProcess(fuzzCase, dir);
      const { outcome, message } = classify(run, bounds);
      counts.tried++;
      counts[outcome]++;
      if (run.ms > info.slowest.ms) info.slowest = { ms: Math.round(run.ms), tags: fuzzCase.tags };
      if ((run.rssBytes ?? 0) > info.peak.bytes)
        info.peak = { bytes: run.rssBytes, tags: fuzzCase.tags };
      if (outcome === 'rejected') {
        const kind = rejectionKind(message);
        info.rejections.set(kind, (info.rejections.get(kind) ?? 0) + 1);
      }
      if (PTX_FAILURES.includes(outcome)) record(groups, outcome, message, fuzzCase);
      onProgress?.(counts);
    }
  };
  try {
    await Promise.all(Array.from({ length: jobs }, worker));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { seed, counts, groups: [...groups.values()], info, ms: Date.now() - started };
}

function record(groups, outcome, message, fuzzCase) {
  const key = `${outcome} ${messageSignature(message)}`;
  let group = groups.get(key);
  if (group === undefined) {
    group = { key, outcome, count: 0, tags: new Map(), example: undefined };
    groups.set(key, group);
  }
  group.count++;
  for (const tag of fuzzCase.tags) group.tags.set(tag, (group.tags.get(tag) ?? 0) + 1);
  if (group.example === undefined || fuzzCase.text.length < group.example.fuzzCase.text.length)
    group.example = { index: fuzzCase.index, message, fuzzCase };
}

/**
 * Shrinks a failing case by deleting runs of lines (halving the run length) while it still fails
 * with the same outcome and message signature; the smallest text found within `timeLimitMs`.
 */
export async function minimizePtx({ fuzzCase, outcome, signature, timeLimitMs = 20_000 }) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-ptx-reduce-'));
  const started = Date.now();
  const fails = async (text) => {
    const verdict = classify(await runChild({ ...fuzzCase, text }, dir));
    return verdict.outcome === outcome && messageSignature(verdict.message) === signature;
  };
  let lines = fuzzCase.text.split('\n');
  try {
    for (let run = Math.ceil(lines.length / 2); run >= 1; run = Math.floor(run / 2)) {
      for (let at = 0; at < lines.length && Date.now() - started < timeLimitMs;) {
        const candidate = [...lines.slice(0, at), ...lines.slice(at + run)];
        if (await fails(candidate.join('\n'))) lines = candidate;
        else at += run;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { ...fuzzCase, text: lines.join('\n') };
}
