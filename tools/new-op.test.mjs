// Adding an op is guided by the compiler: in a scratch copy of ir, ptx and wgsl, a dummy op added
// to the IR makes `tsc` name every place that must handle it (registry, typechecker, interpreter,
// printer, constant faults, uniformity, the PTX and WGSL renderers and PTX legalization). A word
// op is one record in ir's WORD_OPS plus a PTX instruction and a WGSL template or expansion.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { projectChecker, writeScratchProject } from './typecheck.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = ['ir', 'ptx', 'wgsl'];
const scratches = [];

/** Copies the three packages' sources to a temp dir, once: every variant is that copy with its own body.ts. */
function copyPackages() {
  const dir = mkdtempSync(join(tmpdir(), 'forge-new-op-'));
  scratches.push(dir);
  for (const name of PACKAGES) {
    // Not the catalog (ir/src/kernels): it builds specs and switches over no op, and typechecking it
    // was two thirds of this file's time.
    cpSync(join(root, 'packages', name, 'src'), join(dir, 'packages', name, 'src'), {
      recursive: true,
      filter: (source) => !/\.test\.ts$|vitest\.setup\.ts$|\/ir\/src\/kernels$/.test(source),
    });
    // Third-party imports (hash-wasm, webgpu) resolve through the real installs.
    symlinkSync(join(root, 'packages', name, 'node_modules'), join(dir, 'packages', name, 'node_modules'), 'dir'); // prettier-ignore
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeScratchProject(
    dir,
    { include: PACKAGES.map((name) => `packages/${name}/src/**/*.ts`) },
    // The backends see the edited IR sources, not the built @forge/ir.
    { paths: { '@forge/ir': ['./packages/ir/src/index.ts'] } },
  );
  return dir;
}

let copy;
const originals = new Map();

/** The scratch copy with ir's `file` (body.ts by default) set to `edit` of the original; each edit starts from the originals. */
function scratchCopy(edit, file = 'body.ts') {
  copy ??= copyPackages();
  for (const [name, source] of originals)
    writeFileSync(join(copy, 'packages', 'ir', 'src', name), source);
  const path = join(root, 'packages', 'ir', 'src', file);
  if (!originals.has(file)) originals.set(file, readFileSync(path, 'utf8'));
  const original = originals.get(file);
  const edited = edit(original);
  expect(edited, `the edit must change ${file}`).not.toBe(original);
  writeFileSync(join(copy, 'packages', 'ir', 'src', file), edited);
  return copy;
}

let check;

/** Typechecks the scratch copy as `tsc --noEmit -p` would; returns the files (relative to it) with errors. */
function filesWithErrors(dir) {
  check ??= projectChecker(dir);
  const output = check();
  const files = new Set();
  for (const match of output.matchAll(/^(packages\/[^(\s]+\.ts)\(\d+,\d+\): error/gm))
    files.add(match[1]);
  return { files, output };
}

afterAll(() => {
  if (process.env.KEEP_SCRATCH === undefined)
    for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

describe('adding an op', () => {
  it('the unedited copy typechecks (so every error below comes from the new op)', () => {
    const { files, output } = filesWithErrors(scratchCopy((source) => `${source}\n`));
    expect([...files], output).toEqual([]);
  });

  it('a new expression kind is a compile error at every place that must handle it', () => {
    const dir = scratchCopy((source) =>
      source.replace(
        'export type AnyExpr =\n',
        "export interface DummyExpr {\n  readonly op: 'dummy';\n  readonly type: ScalarType;\n  readonly args: readonly [Expr];\n}\nexport type AnyExpr =\n  | DummyExpr\n",
      ),
    );
    const { files, output } = filesWithErrors(dir);
    expect([...files].sort(), output).toEqual([
      'packages/ir/src/constant-faults.ts',
      'packages/ir/src/interpreter/compile-expr.ts',
      'packages/ir/src/ops.ts',
      'packages/ir/src/printer.ts',
      'packages/ir/src/typecheck.ts',
      'packages/ir/src/uniformity.ts',
      'packages/ptx/src/legalize/widen-f16.ts',
      'packages/ptx/src/render-body.ts',
      'packages/wgsl/src/render-body.ts',
    ]);
  });

  it('a new statement kind is a compile error at every place that must handle it', () => {
    const dir = scratchCopy((source) =>
      source.replace(
        'export type Stmt =\n',
        "export interface FenceStmt {\n  readonly op: 'fence';\n}\nexport type Stmt =\n  | FenceStmt\n",
      ),
    );
    const { files, output } = filesWithErrors(dir);
    expect([...files].sort(), output).toEqual([
      'packages/ir/src/constant-faults.ts',
      'packages/ir/src/interpreter/compile-stmt.ts',
      'packages/ir/src/ops.ts',
      'packages/ir/src/printer.ts',
      'packages/ir/src/rewrite.ts',
      'packages/ir/src/schedule.ts',
      'packages/ir/src/typecheck.ts',
      'packages/ir/src/uniformity.ts',
      'packages/ptx/src/render-body.ts',
      'packages/wgsl/src/render-body.ts',
    ]);
  });

  it('a new unary op is a compile error in every op table (typing, semantics, PTX, WGSL)', () => {
    // First in the list, so a real op appended at its end does not break the edit.
    const dir = scratchCopy((source) => source.replace('export const UNARY_OPS = [\n', "export const UNARY_OPS = [\n  'dummy',\n")); // prettier-ignore
    const { files, output } = filesWithErrors(dir);
    expect([...files].sort(), output).toEqual([
      'packages/ir/src/interpreter/scalar-ops.ts',
      'packages/ir/src/ops.ts',
      'packages/ptx/src/ops/arithmetic.ts',
      'packages/wgsl/src/ops/arithmetic.ts',
    ]);
  });

  it('a new word op is one WORD_OPS record, then a compile error only in the PTX and WGSL tables', () => {
    const dir = scratchCopy(
      (source) =>
        source.replace(
          'export const WORD_OPS = {\n',
          "export const WORD_OPS = {\n  dummy: word({ operands: ['u32', 'u32', 'u32'], result: 'u32', semantics: (a: number) => a, description: 'a' }),\n",
        ),
      'ops.ts',
    );
    const { files, output } = filesWithErrors(dir);
    expect([...files].sort(), output).toEqual([
      'packages/ptx/src/ops/arithmetic.ts',
      'packages/wgsl/src/ops/arithmetic.ts',
    ]);
  });
});
