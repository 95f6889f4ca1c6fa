import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from './errors.js';
import { planOutput, planOutputs, writeOutputs } from './output.js';

const work = (): string => mkdtempSync(join(tmpdir(), 'forge-output-'));

describe('output paths', () => {
  it('are refused before any work when they cannot be written', () => {
    const cwd = work();
    mkdirSync(join(cwd, 'adir'));
    writeFileSync(join(cwd, 'afile'), '');
    expect(() => planOutput('--out', '/nonexistent/x', cwd)).toThrow(
      '--out: cannot write /nonexistent/x: directory /nonexistent does not exist',
    );
    expect(() => planOutput('--out', 'adir', cwd)).toThrow(
      '--out: cannot write adir: it is a directory',
    );
    expect(() => planOutput('--out', 'afile/x', cwd)).toThrow(/is not a directory$/);
    expect(() => planOutput('--out', '', cwd)).toThrow(UsageError);
    expect(() =>
      planOutputs(
        [
          { option: '--output y', given: 'a.bin' },
          { option: '--output x', given: './a.bin' },
        ],
        cwd,
      ),
    ).toThrow('--output x: ./a.bin is already written by --output y');
  });

  it('are written all together, without temporary files left behind', () => {
    const cwd = work();
    writeFileSync(join(cwd, 'b.bin'), 'old');
    const outputs = planOutputs(
      [
        { option: '--output y', given: 'a.bin' },
        { option: '--output x', given: 'b.bin' },
      ],
      cwd,
    );
    writeOutputs([
      { output: outputs[0]!, data: 'A' },
      { output: outputs[1]!, data: new Uint8Array([66]) },
    ]);
    expect(readdirSync(cwd).sort()).toEqual(['a.bin', 'b.bin']);
    expect(readFileSync(join(cwd, 'b.bin'), 'utf8')).toBe('B');
  });

  it('leave nothing when one of them fails at write time', () => {
    const cwd = work();
    const [first] = planOutputs([{ option: '--output y', given: 'a.bin' }], cwd);
    // A path that passed its check but cannot be written any more (its directory became a file).
    writeFileSync(join(cwd, 'gone'), '');
    const broken = { option: '--output x', given: 'gone/b.bin', path: join(cwd, 'gone', 'b.bin') };
    expect(() =>
      writeOutputs([
        { output: first!, data: 'A' },
        { output: broken, data: 'B' },
      ]),
    ).toThrow(new InputError('--output x: cannot write gone/b.bin: ENOTDIR'));
    expect(readdirSync(cwd)).toEqual(['gone']);
  });
});
