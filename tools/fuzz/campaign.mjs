import fc from 'fast-check';
import { FAILING, OUTCOMES, openOracle } from './oracle.mjs';
import { reduceCase } from './reduce.mjs';
import { fuzzCaseArbitrary } from './spec-arbitrary.mjs';

// A campaign: fuzz cases through the oracle until a count or a time limit, tallied per outcome.

/** A vendor or Forge message with its specifics (numbers, quoted names) blanked, for grouping. */
export function messageSignature(message) {
  return String(message)
    .replace(/'[^']*'/g, "'…'")
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\b0x[0-9a-f]+\b/gi, 'N')
    .replace(/\b\d+(\.\d+)?(e[+-]?\d+)?\b/g, 'N')
    .slice(0, 160);
}

/** An onProgress that writes `line(counts)` to stderr at most every 30 s. */
export function progressEvery30s(line) {
  let last = Date.now();
  return (counts) => {
    if (Date.now() - last < 30_000) return;
    last = Date.now();
    process.stderr.write(`fuzz: ${line(counts)}\n`);
  };
}

/** A failing group's commonest tags, `tag×count`, for a report. */
export function topTags(group, limit = 6) {
  return [...group.tags]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([tag, count]) => `${tag}×${count}`)
    .join(', ');
}

/** Specs with shared sub-expressions serialize as trees; the size bounds what a report prints. */
const jsonSize = (value) => JSON.stringify(value).length;

/**
 * Runs cases from `seed` until `numRuns` or `timeLimitMs`. Returns the counts per outcome (plus
 * `tried`), the failing cases grouped by outcome and message signature (each with its count, the
 * tags of its cases and its smallest case), spill notes, rejection-message stats and timings.
 */
export async function runCampaign({ seed, numRuns = 1e9, timeLimitMs, onProgress } = {}) {
  const oracle = await openOracle();
  const counts = Object.fromEntries([['tried', 0], ...OUTCOMES.map((o) => [o, 0])]);
  const groups = new Map();
  const spills = new Map();
  const info = {
    longestRejection: 0,
    longMessages: 0,
    slowest: { ms: 0, tags: [] },
    slowestValidation: { ms: 0, tags: [] },
    rejections: new Map(),
  };
  let runIndex = 0;
  const property = fc.asyncProperty(fuzzCaseArbitrary(), async (fuzzCase) => {
    const index = runIndex++;
    const verdict = await oracle.check(fuzzCase);
    counts.tried++;
    counts[verdict.outcome]++;
    if (verdict.validateMs > info.slowestValidation.ms)
      info.slowestValidation = { ms: Math.round(verdict.validateMs), tags: fuzzCase.tags };
    if (verdict.ms > info.slowest.ms) info.slowest = { ms: Math.round(verdict.ms), tags: fuzzCase.tags }; // prettier-ignore
    for (const r of verdict.results) {
      if (r.outcome === 'rejected') {
        const kind = `${r.stage}:${r.errorClass}`;
        info.rejections.set(kind, (info.rejections.get(kind) ?? 0) + 1);
        info.longestRejection = Math.max(info.longestRejection, r.length);
        if (r.length > 300) info.longMessages++;
      }
    }
    for (const spill of verdict.spills) {
      const key = `${fuzzCase.spec.id} ${spill.arch} ${JSON.stringify(spill.schedule)}`;
      spills.set(key, spill.bytes);
    }
    for (const r of verdict.results.filter((result) => FAILING.has(result.outcome))) {
      const key = `${r.outcome} [${r.stage}] ${messageSignature(r.message)}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { key, outcome: r.outcome, count: 0, tags: new Map(), example: undefined };
        groups.set(key, group);
      }
      group.count++;
      for (const tag of fuzzCase.tags) group.tags.set(tag, (group.tags.get(tag) ?? 0) + 1);
      const size = jsonSize(fuzzCase.spec);
      if (group.example === undefined || size < group.example.size) {
        group.example = { size, index, target: r.target, message: r.message, fuzzCase };
      }
    }
    onProgress?.(counts);
    return true;
  });
  const started = Date.now();
  try {
    const details = await fc.check(property, {
      seed,
      numRuns,
      interruptAfterTimeLimit: timeLimitMs,
      markInterruptAsFailure: false,
    });
    // The property never returns false: a failure is the harness's own (no ptxas, no Dawn).
    if (details.failed) throw details.errorInstance ?? new Error(String(details.error));
  } finally {
    oracle.close();
  }
  return { seed, counts, groups: [...groups.values()], spills, info, ms: Date.now() - started };
}

/**
 * Shrinks a failing case while it still fails with the same outcome and message signature: first
 * fast-check's own shrinking from run `index` of `seed`, then structural reduction of the spec
 * (reduce.mjs). Returns the smallest case found within `timeLimitMs`.
 */
export async function minimize({
  seed,
  index,
  fuzzCase,
  outcome,
  signature,
  timeLimitMs = 30_000,
}) {
  const oracle = await openOracle();
  const fails = async (candidate) =>
    (await oracle.check(candidate)).results.some(
      (r) => r.outcome === outcome && messageSignature(r.message) === signature,
    );
  try {
    let best = fuzzCase;
    const property = fc.asyncProperty(fuzzCaseArbitrary(), async (c) => !(await fails(c)));
    const details = await fc.check(property, {
      seed,
      path: String(index),
      numRuns: 1,
      interruptAfterTimeLimit: timeLimitMs / 3,
      markInterruptAsFailure: false,
    });
    const shrunk = details.counterexample?.[0];
    if (shrunk !== undefined && jsonSize(shrunk.spec) < jsonSize(best.spec)) best = shrunk;
    return await reduceCase(best, fails, (timeLimitMs * 2) / 3);
  } finally {
    oracle.close();
  }
}
