// test-summary.mjs run on a synthetic workspace (its copy under tools/, packages/* beside it) with
// vitest JSON reports in the shapes vitest writes: passing, a failed test, a suite that did not
// load, and a hook that timed out (vitest then skips the suite's tests and fails no test).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('test-summary.mjs', import.meta.url));
let roots = [];
afterEach(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
  roots = [];
});

const passing = (name) => ({ title: name, status: 'passed' });
const skipped = (name) => ({ title: name, status: 'pending' });
const failing = (name) => ({
  title: name,
  fullName: `group > ${name}`,
  status: 'failed',
  duration: 60000.4,
  failureMessages: ['Error: Test timed out in 60000ms.\nIf this is a long-running test, ...'],
});

/** One report: its suites as [status, message, assertions]. */
function report(suites) {
  const all = suites.flatMap(([, , assertions]) => assertions);
  const count = (status) => all.filter((assertion) => assertion.status === status).length;
  return {
    numPassedTests: count('passed'),
    numFailedTests: count('failed'),
    numPendingTests: count('pending'),
    numTodoTests: 0,
    success: suites.every(([status]) => status === 'passed'),
    testResults: suites.map(([status, message, assertionResults], index) => ({
      name: `/repo/src/suite-${index}.test.ts`,
      status,
      message,
      assertionResults,
    })),
  };
}

/** Runs the summary over packages/<name> holding each report; tools/ holds a passing one. */
function summarize(reports, ...steps) {
  const root = mkdtempSync(join(tmpdir(), 'forge-test-summary-'));
  roots.push(root);
  const workspace = (directory, name, result) => {
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      join(directory, 'package.json'),
      JSON.stringify({ name, scripts: { test: 'vitest run' } }),
    );
    writeFileSync(join(directory, '.vitest-result.json'), JSON.stringify(result));
  };
  mkdirSync(join(root, 'tools'));
  copyFileSync(script, join(root, 'tools', 'test-summary.mjs'));
  workspace(join(root, 'tools'), '@x/tools', report([['passed', '', [passing('a')]]]));
  for (const [name, result] of Object.entries(reports))
    workspace(join(root, 'packages', name), `@x/${name}`, result);
  const run = spawnSync(process.execPath, [join(root, 'tools', 'test-summary.mjs'), ...steps], {
    encoding: 'utf8',
  });
  const lines = run.stdout.trim().split('\n');
  return { status: run.status, lines, last: lines.at(-1) };
}

describe('test-summary.mjs', () => {
  it('sums passing reports and steps into the closing line, exit 0', () => {
    const result = summarize(
      { one: report([['passed', '', [passing('a'), passing('b')]]]) },
      '--step',
      'docs=ok',
    );
    expect(result.lines).toContain('@x/one: 2 passed, 0 failed');
    expect(result.last).toBe('4 passed, 0 failed');
    expect(result.status).toBe(0);
  });

  it('counts a failed test and a failed step', () => {
    const result = summarize(
      { one: report([['failed', '', [passing('a'), failing('b')]]]) },
      '--step',
      'docs=failed',
    );
    expect(result.last).toBe('2 passed, 2 failed');
    expect(result.lines).toContain(
      '@x/one: failed: src/suite-0.test.ts > group > b (60000 ms): Error: Test timed out in 60000ms.',
    );
    expect(result.status).toBe(1);
  });

  it('counts a suite that did not load as a failure', () => {
    const result = summarize({ one: report([['failed', 'SyntaxError: x', []]]) });
    expect(result.lines).toContain('@x/one: 0 passed, 1 failed');
    expect(result.last).toBe('1 passed, 1 failed');
    expect(result.status).toBe(1);
  });

  it('counts a hook that timed out (its tests skipped, none failed) as a failure and names it', () => {
    const result = summarize({
      one: report([
        ['passed', '', [passing('probe')]],
        ['failed', '', [skipped('case 1'), skipped('case 2')]],
      ]),
    });
    expect(result.lines).toContain('@x/one: 1 passed, 1 failed, 2 skipped');
    expect(result.lines.join('\n')).toContain(
      'suite-1.test.ts failed outside its tests (a load error, or a hook that threw or timed out)',
    );
    expect(result.last).toBe('2 passed, 1 failed');
    expect(result.status).toBe(1);
  });

  it('reports a package whose run wrote no report as a failure', () => {
    summarize({ one: report([['passed', '', [passing('a')]]]) });
    rmSync(join(roots[0], 'packages', 'one', '.vitest-result.json'));
    const again = spawnSync(process.execPath, [join(roots[0], 'tools', 'test-summary.mjs')], {
      encoding: 'utf8',
    });
    expect(again.stdout).toContain(
      '@x/one: no test report (its build or test run did not complete)',
    );
    expect(again.stdout.trim().split('\n').at(-1)).toBe('1 passed, 1 failed');
    expect(again.status).toBe(1);
  });
});
