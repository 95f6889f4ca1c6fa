// `pnpm fuzz --target ptx`: mutated PTX through `forge sim` (child processes, bounded), its
// report on stdout, each failing group's smallest (and, for the first K, shrunk) case saved.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { messageSignature, progressEvery30s, topTags } from './campaign.mjs';
import { minimizePtx, runPtxCampaign } from './ptx-campaign.mjs';
import { BOUNDS, PTX_FAILURES, PTX_OUTCOMES } from './ptx-runner.mjs';

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** The campaign as markdown: counts, rejections by kind, then one section per failing group. */
function markdown(campaign, minimized) {
  const lines = [`seed ${campaign.seed}, ${(campaign.ms / 1000).toFixed(0)} s`, ''];
  lines.push('| outcome | count |', '|---|---|');
  for (const [outcome, count] of Object.entries(campaign.counts)) lines.push(`| ${outcome} | ${count} |`); // prettier-ignore
  for (const group of campaign.groups) {
    const { fuzzCase, message, index } = group.example;
    const shown = minimized.get(group.key) ?? fuzzCase;
    lines.push('', `### ${group.outcome}: ${group.count} case(s)`, '');
    lines.push(`- message: \`${message}\``, `- tags: ${topTags(group)}`);
    lines.push(`- smallest: case ${index}, \`forge sim FILE ${fuzzCase.args.join(' ')}\``);
    lines.push('', '```', shown.text.slice(0, 3000), '```');
  }
  return `${lines.join('\n')}\n`;
}

/** `pnpm fuzz --target ptx`: the campaign and its report; returns the exit code (1: failures). */
export async function fuzzPtx(options) {
  return report(options, await run(options));
}

/** The campaign, `jobs` children at a time, with a progress line on stderr every 30 s. */
function run({ seed, minutes, runs, jobs }) {
  return runPtxCampaign({
    seed,
    numRuns: runs,
    timeLimitMs: minutes === undefined ? undefined : minutes * 60_000,
    jobs,
    onProgress: progressEvery30s((counts) =>
      [...PTX_OUTCOMES, ...PTX_FAILURES].map((o) => `${o} ${counts[o]}`).join(', '),
    ),
  });
}

async function report(options, campaign) {
  const { seed, out } = options;
  const ordered = campaign.groups.sort((a, b) => b.count - a.count);
  const minimized = new Map();
  for (const group of ordered.slice(0, options.minimize)) {
    const { fuzzCase, message } = group.example;
    const signature = messageSignature(message);
    const shrunk = await minimizePtx({ fuzzCase, outcome: group.outcome, signature });
    minimized.set(group.key, shrunk);
  }
  const { counts, info } = campaign;
  const width = Math.max(...Object.keys(counts).map((k) => k.length));
  process.stdout.write(`\nfuzz: ${counts.tried} PTX cases in ${(campaign.ms / 1000).toFixed(0)} s (seed ${seed})\n`); // prettier-ignore
  for (const [outcome, count] of Object.entries(counts))
    process.stdout.write(`  ${outcome.padEnd(width)}  ${count}\n`);
  const rejections = [...info.rejections].sort((a, b) => b[1] - a[1]);
  const shown = rejections.slice(0, 20).map(([kind, n]) => `${kind} ${n}`);
  if (rejections.length > 20) shown.push(`${rejections.length - 20} more kinds`);
  process.stdout.write(`  rejections by kind: ${shown.join('; ') || 'none'}\n`);
  process.stdout.write(`  slowest case: ${info.slowest.ms} ms (${info.slowest.tags.join(' ')}); bound ${BOUNDS.ms} ms\n`); // prettier-ignore
  process.stdout.write(`  largest peak RSS: ${mib(info.peak.bytes)} (${info.peak.tags.join(' ')}); bound ${mib(BOUNDS.rssBytes)}\n`); // prettier-ignore
  if (ordered.length > 0) {
    mkdirSync(out, { recursive: true });
    process.stdout.write(`\nfailures (smallest case of each group saved in ${out}):\n`);
    ordered.forEach((group, n) => {
      const file = join(out, `${seed}-${n}-ptx-${group.outcome}`);
      const { fuzzCase, message, index } = group.example;
      const shown = minimized.get(group.key) ?? fuzzCase;
      // The PTX as run (`forge sim FILE.ptx ARGS`), and what it is next to it.
      writeFileSync(`${file}.ptx`, shown.text);
      writeFileSync(`${file}.json`, `${JSON.stringify({ group: group.key, count: group.count, message, case: index, tags: fuzzCase.tags, args: fuzzCase.args, shrunk: shown !== fuzzCase }, null, 1)}\n`); // prettier-ignore
      process.stdout.write(`  ${group.count}× ${group.key}\n      e.g. ${message}\n      ${file}.ptx\n`); // prettier-ignore
    });
  }
  if (options.report !== undefined) writeFileSync(options.report, markdown(campaign, minimized));
  return PTX_FAILURES.some((outcome) => counts[outcome] > 0) ? 1 : 0;
}
