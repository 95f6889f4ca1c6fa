// Prints the CLI's failure paths as a markdown table, `| command | exit | stderr |`, by running
// every case of cli-error-cases.mjs against the built CLI (`pnpm build` first).
// Usage: node tools/cli-error-table.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CASES, prepareScratch, runCase, shown } from './cli-error-cases.mjs';

const cell = (text) => text.replace(/\|/g, '\\|').replace(/\n/g, '⏎');
const work = mkdtempSync(join(tmpdir(), 'forge-cli-table-'));
try {
  prepareScratch(work);
  const lines = ['| command | exit | stderr |', '| --- | --- | --- |'];
  let mismatches = 0;
  for (const testCase of CASES) {
    const result = runCase(testCase, work);
    // The scratch directory's absolute path varies from run to run; the table shows it as `./`.
    const stderr = result.stderr.replace(/\n$/, '').replaceAll(`${work}/`, './');
    const expected =
      result.code === testCase.exit &&
      (testCase.stderr === null ? stderr === '' : testCase.stderr.test(stderr)) &&
      result.created.length === 0;
    if (!expected) mismatches++;
    const mark = expected ? '' : ' **(unexpected)**';
    lines.push(
      `| \`${cell(shown(testCase.args))}\` | ${result.code}${mark} | ${stderr === '' ? '(none)' : `\`${cell(stderr)}\``} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stderr.write(`${CASES.length} cases, ${mismatches} unexpected\n`);
  process.exitCode = mismatches === 0 ? 0 : 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
