import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IR_PACKAGE } from '@forge/ir';
import { LLAMA_PACKAGE } from '@forge/llama';
import { PTX_BACKEND, PTX_PACKAGE } from '@forge/ptx';
import { PTX_SIM_PACKAGE } from '@forge/ptx-sim';
import { WGSL_PACKAGE } from '@forge/wgsl';
import { BUILD_INFO } from './build-info.js';
import { checkoutGoldenDirectory } from './commands/golden.js';

const cliRoot = fileURLToPath(new URL('..', import.meta.url));
const packagesRoot = join(cliRoot, '..');

// node_modules/@forge/cli laid out as a registry install leaves it: a copy of the built package
// in a project that is not a Forge checkout, its dependencies beside it, and no optional `webgpu`.
const project = mkdtempSync(join(tmpdir(), 'forge-installed-'));
const modules = join(project, 'node_modules');
const installedCli = join(modules, '@forge', 'cli');
// Copied, not linked: their own node_modules hold `webgpu` (a dev dependency), which must not resolve.
for (const name of ['cli', 'wgsl', 'llama']) {
  const installed = join(modules, '@forge', name);
  mkdirSync(installed, { recursive: true });
  cpSync(join(packagesRoot, name, 'dist'), join(installed, 'dist'), { recursive: true });
  cpSync(join(packagesRoot, name, 'package.json'), join(installed, 'package.json'));
}
for (const name of ['ir', 'ptx', 'ptx-sim'])
  symlinkSync(join(packagesRoot, name), join(modules, '@forge', name), 'dir');

function installedForge(...args: string[]) {
  const run = spawnSync(process.execPath, [join(installedCli, 'dist', 'bin.js'), ...args], {
    cwd: project,
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Every path under the project, not following the linked workspace packages. */
function listProject(directory = project, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = `${prefix}${entry.name}`;
    return entry.isDirectory()
      ? [path, ...listProject(join(directory, entry.name), `${path}/`)]
      : [path];
  });
}

describe('forge --version', () => {
  it("prints the CLI's and every backend's build-time version", () => {
    const result = installedForge('--version');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [BUILD_INFO, IR_PACKAGE, PTX_PACKAGE, WGSL_PACKAGE, PTX_SIM_PACKAGE, LLAMA_PACKAGE]
        .map((info) => `${info.name} ${info.version}\n`)
        .join(''),
    );
    expect(result.stdout).toContain(`${PTX_BACKEND.replace(/@(?=[^@]*$)/, ' ')}\n`);
  });

  it('rejects an argument after it as bad input', () => {
    const result = installedForge('--version', 'now');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("forge: unexpected argument 'now' after --version\n");
  });
});

describe('an installed forge has no golden directory of its own', () => {
  it('finds the checkout it was built in, and none for a module under node_modules', () => {
    expect(checkoutGoldenDirectory()).toBe(join(packagesRoot, '..', 'golden'));
    const installedModule = pathToFileURL(join(installedCli, 'dist', 'commands', 'golden.js'));
    expect(checkoutGoldenDirectory(installedModule)).toBeUndefined();
  });

  it.each([
    ['golden', 'update'],
    ['golden', 'check'],
    ['validate', '--target', 'ptx'],
  ])('forge %s %s is one line of bad input, exit 2, and writes nothing', (...args) => {
    const before = listProject();
    const result = installedForge(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(
        `^forge ${args[0]}: no golden directory: this forge is an installed package, not a Forge checkout; pass --dir DIR\n$`,
      ),
    );
    expect(listProject()).toEqual(before);
  });

  it('works on a directory given with --dir', () => {
    const update = installedForge('golden', 'update', '--dir', 'pinned');
    expect(update.code).toBe(0);
    expect(update.stdout).toMatch(/golden update: \d+ written, 0 removed, 0 unchanged/);
    expect(existsSync(join(project, 'pinned', 'manifest.json'))).toBe(true);
    expect(existsSync(join(modules, 'golden'))).toBe(false);
    const check = installedForge('golden', 'check', '--dir', 'pinned');
    expect(check.stdout).toMatch(/golden check: \d+ entries, 0 problem\(s\)/);
    expect(check.code).toBe(0);
  });
});

describe('without the optional peer dependency webgpu', () => {
  it('emits WGSL, byte-identical to the golden file', () => {
    const result = installedForge('emit', 'rmsnorm', '--target', 'wgsl');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      readFileSync(join(packagesRoot, '..', 'golden', 'wgsl', 'rmsnorm.wgsl'), 'utf8'),
    );
  });

  it('a WebGPU run exits 1 with one line naming the package to install', () => {
    const result = installedForge('run', 'rmsnorm', '--target', 'wgsl', '--shape', 'n_embd=64');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'forge run: no WebGPU adapter: the package `webgpu` is not installed; install the optional peer dependency beside @forge/wgsl: `npm install webgpu@0.6.2` (Dawn for Node.js)\n',
    );
  });

  it('the runner rejects with WebGpuUnavailableError, and the runner module itself still loads', () => {
    const script = [
      "const runner = await import('@forge/wgsl/runner');",
      'const error = await runner.openWebGpu().catch((caught) => caught);',
      'console.log(error.name, error instanceof runner.WebGpuUnavailableError);',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module'], {
      cwd: project,
      input: script,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('WebGpuUnavailableError true\n');
  });
});
