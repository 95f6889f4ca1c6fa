// The GGUF fuzz target: mutants of real model files through `forge decode` and `forge run --gguf`,
// each run bounded in time and memory and its refusal one line; tallied per outcome and grouped.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { messageSignature } from './campaign.mjs';
import { RUN_FAILURES, classifyRun, runForge } from './cli-child.mjs';
import { createRng, ggufMutant, ggufSeeds } from './gguf-mutants.mjs';

/**
 * Per command: wall time, memory as a fixed part plus a multiple of the file's size (a child past
 * twice either is killed), and the V8 heap it gets.
 */
export const GGUF_BOUNDS = { ms: 30_000, baseRssBytes: 384 * 2 ** 20, rssPerFileByte: 4, heapMiB: 1024 }; // prettier-ignore

export const GGUF_OUTCOMES = ['ran', 'check-failed', 'rejected', ...RUN_FAILURES];

/** The commands each mutant goes through. */
function commands(seed, file, rng) {
  const list = [['decode', file, '--tokens', '1,2', '--target', 'interp']];
  if (seed.run !== undefined) {
    const [kernel, tensor] = rng.pick(seed.run);
    list.push(['run', kernel, '--target', 'interp', '--gguf', file, '--tensor', tensor]);
  }
  return list;
}

/**
 * Runs GGUF mutants from `seed` until `numRuns` or `timeLimitMs`, each command within `bounds`
 * (GGUF_BOUNDS unless given). Returns { seed, counts (per
 * outcome of each command, plus `tried` mutants and `commands`), groups (failing runs grouped by
 * outcome, command and message signature, each with its count, tags and smallest example), ms }.
 */
export async function runGgufCampaign({
  seed,
  numRuns = 1e9,
  timeLimitMs = Infinity,
  bounds: given = GGUF_BOUNDS,
  onProgress,
}) {
  const seeds = ggufSeeds();
  const rng = createRng(seed);
  const work = mkdtempSync(join(tmpdir(), 'forge-gguf-fuzz-'));
  const counts = Object.fromEntries([['tried', 0], ['commands', 0], ...GGUF_OUTCOMES.map((o) => [o, 0])]); // prettier-ignore
  const groups = new Map();
  const started = Date.now();
  let slowest = 0;
  let largestRss = 0;
  try {
    while (counts.tried < numRuns && Date.now() - started < timeLimitMs) {
      const base = rng.pick(seeds);
      const { bytes, tags } = ggufMutant(base, rng);
      const file = join(work, `mutant-${counts.tried}.gguf`);
      writeFileSync(file, bytes);
      const rssBytes = given.baseRssBytes + given.rssPerFileByte * bytes.length;
      const bounds = { ...given, rssBytes };
      for (const args of commands(base, file, rng)) {
        const run = await runForge(args, { cwd: work, bounds });
        // Exit 1: a check that ran and failed (forge run's FAIL, on stdout) or a kernel fault.
        const { outcome, message } = classifyRun(run, bounds, () => 'check-failed');
        counts.commands++;
        counts[outcome]++;
        slowest = Math.max(slowest, run.ms);
        largestRss = Math.max(largestRss, run.rssBytes ?? 0);
        if (!RUN_FAILURES.includes(outcome)) continue;
        const key = `${outcome} [${args[0]}] ${messageSignature(message.replaceAll(work, 'DIR'))}`;
        const group = groups.get(key) ?? { key, outcome, count: 0, tags: new Map(), example: undefined }; // prettier-ignore
        groups.set(key, group);
        group.count++;
        for (const tag of tags) group.tags.set(tag, (group.tags.get(tag) ?? 0) + 1);
        if (group.example === undefined || bytes.length < group.example.bytes.length)
          group.example = { bytes, tags, args: args.map((a) => (a === file ? 'FILE' : a)), message, seed: base.name }; // prettier-ignore
      }
      rmSync(file);
      counts.tried++;
      onProgress?.(counts);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { seed, counts, groups: [...groups.values()], slowestMs: slowest, largestRss, ms: Date.now() - started }; // prettier-ignore
}
