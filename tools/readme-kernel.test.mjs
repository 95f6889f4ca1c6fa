// docs/authoring.md's "Adding a kernel" step 1 is tested by following it: its code block is compiled with tsc
// against the built @forge/ir (strict, as a kernel file in the repo would be), bundled, imported,
// validated and run on the interpreter.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { interpret, validateSpec } from '@forge/ir';
import { afterAll, describe, expect, it } from 'vitest';
import { projectChecker, writeScratchProject } from './typecheck.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
// Under tools/node_modules (ignored by git and prettier), so that `@forge/ir` resolves through
// tools/node_modules as for any workspace user.
const cache = join(here, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const scratch = mkdtempSync(join(cache, 'readme-kernel-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The first ```ts block of docs/authoring.md's "## Adding a kernel" section, unindented. */
function readmeKernel() {
  const page = readFileSync(join(root, 'docs', 'authoring.md'), 'utf8');
  const section = page.slice(page.indexOf('## Adding a kernel'));
  const match = /\n( *)```ts\n([\s\S]*?)\n\1```/.exec(
    section.slice(0, section.indexOf('\n## ', 1)),
  );
  expect(match, 'the section has a ```ts block').not.toBeNull();
  const indent = match[1].length;
  return match[2]
    .split('\n')
    .map((line) => line.slice(indent))
    .join('\n');
}

describe('docs/authoring.md: Adding a kernel', () => {
  const source = readmeKernel();
  const file = join(scratch, 'kernel.ts');
  let check;

  /** tsc's errors for `kernel.ts` holding `code`, under the repository's strict settings. */
  function typeErrors(code) {
    writeFileSync(file, `${code}\n`);
    writeScratchProject(scratch, { files: ['kernel.ts'] });
    check ??= projectChecker(scratch);
    return check();
  }

  it('typechecks, and a u32 param where the f32 `a` goes does not', () => {
    const swapped = source.replace("b.param('a')", "b.param('n')");
    expect(swapped).not.toBe(source);
    expect(typeErrors(swapped)).toMatch(/kernel\.ts\(\d+,\d+\): error TS/);
    expect(typeErrors(source)).toBe('');
  });

  it('builds a spec that validates and computes y = a * x + y on the interpreter', async () => {
    writeFileSync(file, `${source}\n`);
    const out = join(scratch, 'kernel.mjs');
    await build({
      entryPoints: [file],
      outfile: out,
      format: 'esm',
      bundle: false,
      logLevel: 'silent',
    });
    const { spec } = await import(pathToFileURL(out).href);
    expect(validateSpec(spec).id).toBe('axpy');
    const n = 150;
    const x = Float32Array.from({ length: n }, (_, i) => i);
    const y = Float32Array.from({ length: n }, () => 1);
    interpret(spec, { params: { n, a: 2 }, buffers: { x, y }, grid: [2, 1, 1] });
    expect([...y]).toEqual(Array.from({ length: n }, (_, i) => 2 * i + 1));
  });
});
