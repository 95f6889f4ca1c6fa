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
for (const packageDirectory of workspaces) {
  const pkg = JSON.parse(readFileSync(join(packageDirectory, 'package.json'), 'utf8'));
  if (pkg.scripts?.test === undefined) continue;
  const report = join(packageDirectory, '.vitest-result.json');
  if (!existsSync(report)) {
    console.log(`${pkg.name}: no test report (its build or test run did not complete)`);
    failed += 1;
    continue;
  }
  const result = JSON.parse(readFileSync(report, 'utf8'));
  // Suites that fail to load count as failures even when they declared no tests.
  const brokenSuites = result.testResults.filter(
    (suite) => suite.status === 'failed' && suite.assertionResults.length === 0,
  ).length;
  console.log(
    `${pkg.name}: ${result.numPassedTests} passed, ${result.numFailedTests + brokenSuites} failed`,
  );
  passed += result.numPassedTests;
  failed += result.numFailedTests + brokenSuites;
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
