// `pnpm fuzz --target gguf`: the GGUF campaign with a progress line every 30 s, its counts, and each
// failing group's smallest mutant saved (the file itself) in the output directory.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { progressEvery30s } from './campaign.mjs';
import { RUN_FAILURES } from './cli-child.mjs';
import { GGUF_BOUNDS, GGUF_OUTCOMES, runGgufCampaign } from './gguf-campaign.mjs';

/** Runs the campaign for `minutes` or `runs` from `seed`, prints it; resolves to the exit code. */
export async function fuzzGguf({ seed, minutes, runs, out }) {
  const campaign = await runGgufCampaign({
    seed,
    numRuns: runs,
    timeLimitMs: minutes === undefined ? undefined : minutes * 60_000,
    onProgress: progressEvery30s(
      (counts) =>
        `${counts.tried} files, ${GGUF_OUTCOMES.map((o) => `${o} ${counts[o]}`).join(', ')}`,
    ),
  });
  const { counts } = campaign;
  const width = Math.max(...Object.keys(counts).map((key) => key.length));
  process.stdout.write(`\nfuzz: ${counts.tried} GGUF files, ${counts.commands} commands in ${(campaign.ms / 1000).toFixed(0)} s (seed ${seed})\n`); // prettier-ignore
  for (const [outcome, count] of Object.entries(counts))
    process.stdout.write(`  ${outcome.padEnd(width)}  ${count}\n`);
  process.stdout.write(`  bounds: ${GGUF_BOUNDS.ms / 1000} s a command, peak RSS ${GGUF_BOUNDS.baseRssBytes / 2 ** 20} MiB + ${GGUF_BOUNDS.rssPerFileByte} × the file (killed at twice either)\n`); // prettier-ignore
  process.stdout.write(`  slowest command ${(campaign.slowestMs / 1000).toFixed(2)} s, largest peak RSS ${(campaign.largestRss / 2 ** 20).toFixed(0)} MiB\n`); // prettier-ignore
  const ordered = campaign.groups.sort((a, b) => b.count - a.count);
  if (ordered.length > 0) {
    mkdirSync(out, { recursive: true });
    process.stdout.write(`\nfailures (smallest file of each group saved in ${out}):\n`);
    ordered.forEach((group, n) => {
      const file = join(out, `${seed}-${n}-${group.outcome}.gguf`);
      writeFileSync(file, group.example.bytes);
      process.stdout.write(`  ${group.count}× ${group.key}\n      e.g. forge ${group.example.args.join(' ')} (${group.example.seed}: ${group.example.tags.join(', ')}): ${group.example.message}\n      ${file}\n`); // prettier-ignore
    });
  }
  return RUN_FAILURES.some((outcome) => counts[outcome] > 0) ? 1 : 0;
}
