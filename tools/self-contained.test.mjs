// The repository is self-contained: the ggml vectors live in fixtures/ with their provenance, and
// no tracked file points a path outside the clone.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const trackedFiles = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '');

/** Every `{ file, sha256 }` record in the ggml manifest, wherever it nests. */
function fileRecords(value, found = []) {
  if (value === null || typeof value !== 'object') return found;
  if (typeof value.file === 'string' && typeof value.sha256 === 'string') found.push(value);
  for (const child of Object.values(value)) fileRecords(child, found);
  return found;
}

describe('fixtures/ggml', () => {
  const directory = join(root, 'fixtures', 'ggml');
  const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8'));
  const records = fileRecords(manifest);

  it('lists every vector with its sha256, and every file in the folder is listed or documents them', () => {
    const listed = new Set(records.map((record) => record.file));
    const present = readdirSync(directory);
    expect(present.filter((file) => !listed.has(file)).sort()).toEqual([
      'README.md',
      'manifest.json',
    ]);
    expect(listed.size).toBe(present.length - 2);
  });

  it.each(records.map((record) => [record.file, record]))(
    '%s has the bytes ggml made',
    (_, record) => {
      const bytes = readFileSync(join(directory, record.file));
      expect(bytes.length).toBe(record.bytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(record.sha256);
    },
  );
});

describe('no tracked file reads outside the clone', () => {
  const sources = trackedFiles.filter(
    (file) => /\.(ts|mjs|js|cjs|sh|json)$/.test(file) && !file.startsWith('fixtures/'),
  );

  it('no relative URL or path literal resolves above the repository root', () => {
    const escaping = [];
    for (const file of sources) {
      const text = readFileSync(join(root, file), 'utf8');
      // Relative module URLs and paths written as string literals (../x, ../../y/).
      for (const match of text.matchAll(/['"`]((?:\.\.\/)+)[^'"`]*['"`]/g)) {
        const target = resolve(dirname(join(root, file)), match[1]);
        if (relative(root, target).startsWith('..')) escaping.push(`${file}: ${match[0]}`);
      }
    }
    expect(escaping).toEqual([]);
  });

  it('nothing names the shared folder that sits beside the clone on developer machines', () => {
    const naming = sources.filter((file) =>
      /shared\/oracle|\.\.\/shared\b/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(naming).toEqual([]);
  });
});
