// Sums the vitest JSON reports of every package into one closing line: "N passed, N failed".
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
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
