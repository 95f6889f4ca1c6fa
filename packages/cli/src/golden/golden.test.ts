import { execFileSync } from 'node:child_process';
import {
  cpSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blake3Hex } from '@forge/ir';
import { assemblePtx } from '@forge/ptx/ptxas';
import { closeSharedWebGpu, sharedWebGpu, wgslDiagnostics } from '@forge/wgsl/runner';
import { checkoutGoldenDirectory } from '../commands/golden.js';

const DEFAULT_GOLDEN_DIR = checkoutGoldenDirectory() ?? 'no golden directory';
import { goldenEntries, goldenFileName } from './entries.js';
import { checkGolden, readManifest, updateGolden } from './golden.js';
import { unifiedDiff } from './unified-diff.js';

function copyOfGolden(): string {
  const directory = mkdtempSync(join(tmpdir(), 'forge-golden-'));
  cpSync(DEFAULT_GOLDEN_DIR, directory, { recursive: true });
  return directory;
}

describe('golden files', () => {
  it('match what the backends emit now, byte for byte and hash for hash', () => {
    const { checked, problems } = checkGolden(DEFAULT_GOLDEN_DIR);
    expect(
      problems.map((problem) => `${problem.file}: ${problem.message}\n${problem.diff ?? ''}`),
    ).toEqual([]);
    expect(checked).toBe(goldenEntries().length);
  });

  const manifest = readManifest(DEFAULT_GOLDEN_DIR);
  afterAll(closeSharedWebGpu);
  for (const entry of manifest?.entries ?? []) {
    if (entry.target.kind === 'wgsl') {
      it(`${entry.file} compiles in Dawn (Tint) with zero errors and warnings`, async () => {
        const source = readFileSync(join(DEFAULT_GOLDEN_DIR, entry.file), 'utf8');
        expect(blake3Hex(source)).toBe(entry.sourceHash);
        const features = [
          /^enable f16;/m.test(source) ? ['shader-f16'] : [],
          /^enable subgroups;/m.test(source) ? ['subgroups'] : [],
        ].flat();
        expect(await wgslDiagnostics(await sharedWebGpu(features), source)).toEqual([]);
      });
      continue;
    }
    const arch = entry.target.arch;
    it(`${entry.file} assembles with ptxas -arch=${arch} with zero spills`, () => {
      const source = readFileSync(join(DEFAULT_GOLDEN_DIR, entry.file), 'utf8');
      expect(blake3Hex(source)).toBe(entry.sourceHash);
      const result = assemblePtx(source, arch);
      expect(result.ok).toBe(true);
      expect(result.diagnostics).toBe('');
      expect(result.spillStores).toBe(0);
      expect(result.spillLoads).toBe(0);
      expect(result.stackBytes).toBe(0);
    });
  }

  it('reports a changed byte with a unified diff and both hashes', () => {
    const directory = copyOfGolden();
    const file = join(directory, 'ptx/rmsnorm.sm_80.ptx');
    writeFileSync(file, readFileSync(file, 'utf8').replace('bar.sync 0;', 'bar.sync 1;'));
    const { problems } = checkGolden(directory);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toMatch(
      /bytes differ: pinned sourceHash [0-9a-f]{64}, file [0-9a-f]{64}, emitted [0-9a-f]{64}/,
    );
    expect(problems[0]?.diff).toMatch(/^-\tbar\.sync 1;$/m);
    expect(problems[0]?.diff).toMatch(/^\+\tbar\.sync 0;$/m);
    expect(problems[0]?.diff).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/m);
  });

  it('flags stray files and stale manifest rows, and update rewrites only what changed', () => {
    const directory = copyOfGolden();
    writeFileSync(join(directory, 'ptx/stray.ptx'), 'stray');
    const changed = join(directory, 'ptx/affine-f32.sm_90.ptx');
    writeFileSync(changed, 'tampered');
    const untouched = join(directory, 'ptx/rmsnorm.sm_75.ptx');
    const before = statSync(untouched).mtimeMs;
    const problems = checkGolden(directory).problems.map((problem) => problem.file);
    expect(problems).toEqual(['ptx/affine-f32.sm_90.ptx', 'ptx/stray.ptx']);
    const result = updateGolden(directory);
    expect(result.written).toEqual(['ptx/affine-f32.sm_90.ptx']);
    expect(result.removed).toEqual(['ptx/stray.ptx']);
    expect(statSync(untouched).mtimeMs).toBe(before);
    expect(checkGolden(directory).problems).toEqual([]);
  });

  it('refuses a golden file that is not a regular file, and leaves it as it is', () => {
    const directory = copyOfGolden();
    const file = 'ptx/rmsnorm.sm_80.ptx';
    const entries = goldenEntries().filter((entry) => goldenFileName(entry) === file);
    rmSync(join(directory, file));
    // Reading a FIFO without a writer would wait for ever; replacing it would remove it.
    execFileSync('mkfifo', [join(directory, file)]);
    const refused = `--dir: golden/${file} is not a regular file (a FIFO)`;
    expect(() => checkGolden(directory, entries)).toThrow(refused);
    expect(() => updateGolden(directory, entries)).toThrow(refused);
    expect(lstatSync(join(directory, file)).isFIFO()).toBe(true);
  });

  it('fails clearly without a manifest', () => {
    const directory = mkdtempSync(join(tmpdir(), 'forge-golden-empty-'));
    expect(checkGolden(directory).problems[0]?.message).toMatch(
      /missing or malformed; run `pnpm forge golden update`/,
    );
  });
});

describe('unifiedDiff', () => {
  it('shows changed lines with context and hunk headers', () => {
    const before = Array.from({ length: 20 }, (_, index) => `line ${index}`).join('\n');
    const after = before.replace('line 10', 'line ten');
    expect(unifiedDiff(before, after, 'a', 'b')).toBe(
      [
        '--- a',
        '+++ b',
        '@@ -8,7 +8,7 @@',
        'line 7',
        'line 8',
        'line 9',
        '-line 10',
        '+line ten',
        'line 11',
        'line 12',
        'line 13',
      ]
        .map((line) => (line.startsWith('line') ? ` ${line}` : line))
        .join('\n'),
    );
  });
});
