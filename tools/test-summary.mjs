// Sums the vitest JSON reports of every package, plus CI's other checks (`--step name=ok|failed`,
// one per check), into one closing line: "N passed, N failed".
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
let passed = 0;
let failed = 0;
const workspaces = [
  ...readdirSync(join(root, 'packages'))
    .sort()
    .map((name) => join(root, 'packages', name)),
  join(root, 'tools'),
];
// A package's Node suites write .vitest-result.json; one with a vitest.browser.config.ts also runs
// a browser suite (headless Chromium), which writes .vitest-browser-result.json.
const reports = (packageDirectory) => [
  { file: '.vitest-result.json', label: '' },
  ...(existsSync(join(packageDirectory, 'vitest.browser.config.ts'))
    ? [{ file: '.vitest-browser-result.json', label: ' (browser)' }]
    : []),
];
for (const packageDirectory of workspaces) {
  const pkg = JSON.parse(readFileSync(join(packageDirectory, 'package.json'), 'utf8'));
  if (pkg.scripts?.test === undefined) continue;
  for (const { file, label } of reports(packageDirectory)) {
    const report = join(packageDirectory, file);
    if (!existsSync(report)) {
      console.log(`${pkg.name}${label}: no test report (its build or test run did not complete)`);
      failed += 1;
      continue;
    }
    const result = JSON.parse(readFileSync(report, 'utf8'));
    // A suite that failed with no failed test (it did not load, or a hook threw or timed out and
    // vitest skipped its tests) counts as one failure, so the line agrees with vitest's exit code.
    const brokenSuites = result.testResults.filter(
      (suite) =>
        suite.status === 'failed' &&
        !suite.assertionResults.some((assertion) => assertion.status === 'failed'),
    );
    for (const suite of brokenSuites)
      console.log(
        `${pkg.name}${label}: ${suite.name} failed outside its tests (a load error, or a hook that threw or timed out)${suite.message ? `: ${suite.message.split('\n')[0]}` : ''}`,
      );
    // Each failed test is named, with its time and first message line: CI shows only the log's tail.
    for (const suite of result.testResults)
      for (const assertion of suite.assertionResults.filter((each) => each.status === 'failed'))
        console.log(
          `${pkg.name}${label}: failed: ${suite.name.split('/').slice(-2).join('/')} > ${assertion.fullName ?? assertion.title}${typeof assertion.duration === 'number' ? ` (${Math.round(assertion.duration)} ms)` : ''}: ${String(assertion.failureMessages?.[0] ?? '').split('\n')[0]}`,
        );
    // Skipped tests (a browser adapter lacking a feature) are named, never counted as passed.
    const skipped = result.numPendingTests + result.numTodoTests;
    console.log(
      `${pkg.name}${label}: ${result.numPassedTests} passed, ${result.numFailedTests + brokenSuites.length} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`,
    );
    passed += result.numPassedTests;
    failed += result.numFailedTests + brokenSuites.length;
  }
}
// CI's checks outside the test suites (changesets, API docs, release rehearsal) count one each.
const args = process.argv.slice(2);
for (let index = 0; index < args.length; index += 2) {
  const [name, outcome] = (args[index + 1] ?? '').split('=');
  if (args[index] !== '--step' || name === undefined || !['ok', 'failed'].includes(outcome)) {
    console.log(
      `test-summary: expected --step name=ok|failed, got '${args.slice(index, index + 2).join(' ')}'`,
    );
    process.exit(2);
  }
  console.log(`ci step ${name}: ${outcome === 'ok' ? '1 passed, 0 failed' : '0 passed, 1 failed'}`);
  if (outcome === 'ok') passed += 1;
  else failed += 1;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
