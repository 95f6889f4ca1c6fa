import { execFileSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

describe('output targets that are not regular files', () => {
  const nullIsDevice = (): boolean => lstatSync('/dev/null').isCharacterDevice();

  it('are refused in one line naming the option, and left as they are', () => {
    const cwd = work();
    execFileSync('mkfifo', [join(cwd, 'fifo')]);
    // A link to /dev/null, so the device itself is never named as a target.
    symlinkSync('/dev/null', join(cwd, 'null.lnk'));
    expect(() => planOutput('--logits', 'fifo', cwd)).toThrow(
      new InputError(
        '--logits: fifo is not a regular file (a FIFO); forge writes only regular files',
      ),
    );
    expect(() => planOutput('--out', 'null.lnk', cwd)).toThrow(
      new InputError(
        '--out: null.lnk (a link to /dev/null) is not a regular file (a character device); forge writes only regular files',
      ),
    );
    expect(lstatSync(join(cwd, 'fifo')).isFIFO()).toBe(true);
    expect(lstatSync(join(cwd, 'null.lnk')).isSymbolicLink()).toBe(true);
    expect(nullIsDevice()).toBe(true);
    expect(readdirSync(cwd).sort()).toEqual(['fifo', 'null.lnk']);
  });

  it('are refused at write time when one appears after the check, and nothing is renamed', () => {
    const cwd = work();
    const outputs = planOutputs(
      [
        { option: '--output y', given: 'a.bin' },
        { option: '--output x', given: 'b.bin' },
      ],
      cwd,
    );
    // b.bin became a FIFO between the check and the write: it stays one, a.bin is not written.
    execFileSync('mkfifo', [join(cwd, 'b.bin')]);
    expect(() =>
      writeOutputs([
        { output: outputs[0]!, data: 'A' },
        { output: outputs[1]!, data: 'B' },
      ]),
    ).toThrow(
      new InputError(
        '--output x: b.bin is not a regular file (a FIFO); forge writes only regular files',
      ),
    );
    expect(lstatSync(join(cwd, 'b.bin')).isFIFO()).toBe(true);
    expect(readdirSync(cwd)).toEqual(['b.bin']);
  });

  it('through a link: the file the link names is replaced and the link stays', () => {
    const cwd = work();
    mkdirSync(join(cwd, 'real'));
    writeFileSync(join(cwd, 'real', 'k.ptx'), 'old');
    symlinkSync('real/k.ptx', join(cwd, 'k.lnk'));
    symlinkSync('missing', join(cwd, 'dangling'));
    const output = planOutput('--out', 'k.lnk', cwd);
    expect(output.path).toBe(join(realpathSync(cwd), 'real', 'k.ptx'));
    writeOutputs([{ output, data: 'new' }]);
    expect(lstatSync(join(cwd, 'k.lnk')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(cwd, 'real', 'k.ptx'), 'utf8')).toBe('new');
    expect(readdirSync(join(cwd, 'real'))).toEqual(['k.ptx']);
    // Two names of one file clash; a link to nothing is not followed to make a file.
    expect(() =>
      planOutputs(
        [
          { option: '--output y', given: 'real/k.ptx' },
          { option: '--output x', given: 'k.lnk' },
        ],
        cwd,
      ),
    ).toThrow('--output x: k.lnk is already written by --output y');
    expect(() => planOutput('--out', 'dangling', cwd)).toThrow(
      new InputError('--out: cannot write dangling: it is a symbolic link to a missing file'),
    );
  });
});
