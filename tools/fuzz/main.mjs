// `pnpm fuzz --minutes N [--target spec|ptx|gguf] [--seed S] [--runs N] [--out DIR] [--minimize K]`:
// fuzzes a target — `spec` (the default): specs through Forge and the vendor tools; `ptx`: mutated
// PTX through `forge sim`; `gguf`: mutated GGUF model files through `forge decode` and `forge run
// --gguf` — prints the counts per outcome and each failing group, saves their smallest (and, for
// specs and PTX, shrunk) cases, and exits 1 on any failure.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ForgeError, printKernel, ready } from '@forge/ir';
import { messageSignature, minimize, progressEvery30s, runCampaign, topTags } from './campaign.mjs';
import { fuzzGguf } from './gguf-report.mjs';
import { FAILING, OUTCOMES } from './oracle.mjs';
import { fuzzPtx } from './ptx-target.mjs';

const USAGE =
  'usage: pnpm fuzz --minutes N [--target spec|ptx|gguf] [--seed S] [--runs N] [--jobs J] [--out DIR] [--minimize K] [--report FILE]';

/**
 * What each `--target` fuzzes (`spec` is the default): a function from the parsed options to the
 * exit code, which runs the campaign and prints its report. A new target is one more entry.
 */
const TARGETS = { spec: fuzzSpecs, ptx: fuzzPtx, gguf: fuzzGguf };

function numberOption(values, name, fallback, min, max) {
  const text = values[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new RangeError(`--${name} must be a number in [${min}, ${max}], got '${text}'`);
  }
  return value;
}

function parse(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string' },
      seed: { type: 'string' },
      runs: { type: 'string' },
      out: { type: 'string' },
      minimize: { type: 'string' },
      report: { type: 'string' },
      target: { type: 'string' },
      jobs: { type: 'string' },
    },
  });
  const target = values.target ?? 'spec';
  if (!Object.hasOwn(TARGETS, target))
    throw new RangeError(`--target must be one of ${Object.keys(TARGETS).join(', ')}, got '${target}'`); // prettier-ignore
  const minutes = numberOption(values, 'minutes', undefined, 0.05, 24 * 60);
  const runs = numberOption(values, 'runs', undefined, 1, 1e9);
  if (minutes === undefined && runs === undefined) throw new RangeError('give --minutes or --runs');
  return {
    target,
    minutes,
    runs,
    seed: Math.trunc(numberOption(values, 'seed', Date.now() % 2 ** 31, 0, 2 ** 31 - 1)),
    out: resolve(values.out ?? 'fuzz-failures'),
    minimize: numberOption(values, 'minimize', 5, 0, 100),
    report: values.report,
    target,
    /** Cases run at once (targets that run child processes). */
    jobs: Math.trunc(numberOption(values, 'jobs', 2, 1, 64)),
  };
}

/** The case as Forge's printer shows it (a few lines), or its JSON when it cannot print it. */
function printed(fuzzCase) {
  let text;
  try {
    text = printKernel(fuzzCase.spec);
  } catch {
    text = JSON.stringify(fuzzCase.spec);
  }
  const lines = text
    .split('\n')
    .map((line) => (line.length > 240 ? `${line.slice(0, 240)}…` : line));
  const shown = lines.slice(0, 25).join('\n');
  return lines.length > 25 ? `${shown}\n… (${lines.length - 25} more lines)` : shown;
}

/** The campaign as markdown: counts, then one section per failing group. */
function markdown(campaign, minimized) {
  const lines = [`seed ${campaign.seed}, ${(campaign.ms / 1000).toFixed(0)} s`, ''];
  lines.push('| outcome | count |', '|---|---|');
  for (const [outcome, count] of Object.entries(campaign.counts)) lines.push(`| ${outcome} | ${count} |`); // prettier-ignore
  for (const group of campaign.groups.sort((a, b) => b.count - a.count)) {
    const { fuzzCase, message, target, index } = group.example;
    lines.push('', `### ${group.outcome}: ${group.count} case(s)`, '');
    lines.push(`- message (${target}): \`${message}\``);
    lines.push(`- tags: ${topTags(group)}`);
    lines.push(`- smallest: run ${index}, ${fuzzCase.source}, schedule ${JSON.stringify(fuzzCase.schedule)}`); // prettier-ignore
    const shrunk = minimized.get(group.key);
    const shown = shrunk ?? fuzzCase;
    lines.push('', '```', printed(shown), '```');
  }
  if (campaign.spills.size > 0) {
    lines.push('', '### spills (info)', '');
    for (const [key, bytes] of campaign.spills) lines.push(`- ${key}: ${bytes} bytes`);
  }
  return `${lines.join('\n')}\n`;
}

async function main() {
  let options;
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`fuzz: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  await ready();
  const { seed, minutes, runs, target } = options;
  process.stdout.write(`fuzz: ${target}, seed ${seed}, ${minutes !== undefined ? `${minutes} min` : `${runs} runs`}\n`); // prettier-ignore
  return TARGETS[target](options);
}

/** The spec campaign and its report. */
async function fuzzSpecs(options) {
  const { seed, minutes, runs } = options;
  let campaign;
  try {
    campaign = await run(seed, minutes, runs);
  } catch (error) {
    // A missing ptxas or WebGPU is a setup problem, said in one line; anything else is a bug.
    if (!(error instanceof ForgeError)) throw error;
    process.stderr.write(`fuzz: ${error.message}\n`);
    return 2;
  }
  return report(options, campaign);
}

/** The campaign, with a progress line on stderr every 30 s. */
function run(seed, minutes, runs) {
  return runCampaign({
    seed,
    numRuns: runs,
    timeLimitMs: minutes === undefined ? undefined : minutes * 60_000,
    onProgress: progressEvery30s((counts) => OUTCOMES.map((o) => `${o} ${counts[o]}`).join(', ')),
  });
}

async function report(options, campaign) {
  const { seed, out } = options;
  const minimized = new Map();
  const ordered = campaign.groups.sort((a, b) => b.count - a.count);
  for (const group of ordered.slice(0, options.minimize)) {
    const shrunk = await minimize({
      seed,
      index: group.example.index,
      fuzzCase: group.example.fuzzCase,
      outcome: group.outcome,
      signature: messageSignature(group.example.message),
      timeLimitMs: 20_000,
    });
    if (shrunk !== undefined) minimized.set(group.key, shrunk);
  }

  const width = Math.max(...Object.keys(campaign.counts).map((k) => k.length));
  process.stdout.write(`\nfuzz: ${campaign.counts.tried} specs in ${(campaign.ms / 1000).toFixed(0)} s (seed ${seed})\n`); // prettier-ignore
  for (const [outcome, count] of Object.entries(campaign.counts))
    process.stdout.write(`  ${outcome.padEnd(width)}  ${count}\n`);
  process.stdout.write(`  spilling kernel configurations (info): ${campaign.spills.size}\n`);
  process.stdout.write(`  longest rejection message: ${campaign.info.longestRejection} chars (${campaign.info.longMessages} over 300)\n`); // prettier-ignore
  const rejections = [...campaign.info.rejections].map(([kind, n]) => `${kind} ${n}`).join(', ');
  process.stdout.write(`  rejections by stage and error (per target): ${rejections || 'none'}\n`);
  const { slowest, slowestValidation } = campaign.info;
  process.stdout.write(`  slowest case: ${slowest.ms} ms (${slowest.tags.join(' ')}); slowest validation: ${slowestValidation.ms} ms (${slowestValidation.tags.join(' ')})\n`); // prettier-ignore
  if (ordered.length > 0) {
    mkdirSync(out, { recursive: true });
    process.stdout.write(`\nfailures (smallest case of each group saved in ${out}):\n`);
    ordered.forEach((group, n) => {
      const file = join(out, `${seed}-${n}-${group.outcome}.json`);
      const shrunk = minimized.get(group.key);
      writeFileSync(file, `${JSON.stringify({ group: group.key, count: group.count, message: group.example.message, case: group.example.fuzzCase, shrunk }, null, 1)}\n`); // prettier-ignore
      process.stdout.write(`  ${group.count}× ${group.key}\n      e.g. ${group.example.message}\n      ${file}\n`); // prettier-ignore
    });
  }
  if (options.report !== undefined) writeFileSync(options.report, markdown(campaign, minimized));
  const failed = OUTCOMES.filter((o) => FAILING.has(o)).some((o) => campaign.counts[o] > 0);
  return failed ? 1 : 0;
}

process.exitCode = await main();
