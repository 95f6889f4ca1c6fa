// Every failure path of the CLI in CASES: its exit code, exactly one stderr line matching the
// case (no stack trace, no Dawn log, no raw control character), an empty stdout unless a check's
// report is the point, and no file created in the working directory. Cases run through `runCli` in
// this process, except `spawned` ones (one per command, and those that open Dawn), which run the
// built binary: one node start-up per case was most of this file's time.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CASES,
  prepareScratch,
  runCase,
  runCaseInProcess,
  shown,
  spawned,
} from './cli-error-cases.mjs';

const work = mkdtempSync(join(tmpdir(), 'forge-cli-errors-'));
prepareScratch(work);

describe('forge failure paths: one line, the right exit code, nothing written', () => {
  const named = CASES.map((testCase) => [
    `${shown(testCase.args)}${spawned(testCase) ? ' (built binary)' : ''}`,
    testCase,
  ]);
  it.each(named)('%s', async (_, testCase) => {
    const result = spawned(testCase)
      ? runCase(testCase, work)
      : await runCaseInProcess(testCase, work);
    expect(result.code).toBe(testCase.exit);
    if (testCase.stderr === null) expect(result.stderr).toBe('');
    else {
      expect(result.stderr).toMatch(/^[^\n]*\n$/);
      expect(result.stderr.trimEnd()).toMatch(testCase.stderr);
    }
    // eslint-disable-next-line no-control-regex
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    if (testCase.stdout === undefined) expect(result.stdout).toBe('');
    else expect(result.stdout).toMatch(testCase.stdout);
    expect(result.created).toEqual([]);
  });

  it('spawns the built binary for one case of every command and each case that opens Dawn', () => {
    const commands = new Set(CASES.map((testCase) => testCase.args[0]));
    const binary = CASES.filter(spawned);
    expect(new Set(binary.map((testCase) => testCase.args[0]))).toEqual(commands);
    expect(binary.filter((testCase) => testCase.args.includes('wgsl'))).toHaveLength(4);
  });
});
