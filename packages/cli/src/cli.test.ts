import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rmsnorm, semanticHash } from '@forge/ir';
import { emitPtx, ptxTarget } from '@forge/ptx';
import { DEFAULT_GOLDEN_DIR } from './commands/golden.js';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'forge-cli-'));

function forge(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { cwd: work, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function writeJson(name: string, value: unknown): string {
  const path = join(work, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return path;
}

describe('forge emit', () => {
  it('prints the same bytes as the golden file and as the library, from two processes', () => {
    const first = forge('emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80');
    const second = forge('emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    expect(first.stdout).toBe(
      readFileSync(join(DEFAULT_GOLDEN_DIR, 'ptx/rmsnorm.sm_80.ptx'), 'utf8'),
    );
    expect(first.stdout).toBe(emitPtx(rmsnorm.spec, {}, ptxTarget('sm_80')).source);
  });

  it('emits a spec file from `forge spec` byte-identically to the kernel id', () => {
    const spec = forge('spec', 'rmsnorm');
    expect(spec.code).toBe(0);
    const path = writeJson('rmsnorm.json', spec.stdout);
    const fromFile = forge('emit', path, '--arch', 'sm_90', '--schedule', 'workgroupSize=512');
    const fromId = forge('emit', 'rmsnorm', '--arch', 'sm_90', '--schedule', 'workgroupSize=512');
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toBe(fromId.stdout);
    expect(forge('hash', path).stdout.trim()).toBe(semanticHash(rmsnorm.spec));
  });

  it('writes --out and prints the whole GeneratedShader with --json', () => {
    const out = join(work, 'affine.ptx');
    expect(forge('emit', 'affine-f32', '--arch', 'sm_75', '--out', out).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('.target sm_75');
    const json = JSON.parse(
      forge('emit', 'affine-f32', '--arch', 'sm_75', '--json').stdout,
    ) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual([
      'cacheKey',
      'kernelId',
      'launch',
      'schedule',
      'semanticHash',
      'source',
      'sourceHash',
      'target',
    ]);
    expect(json['source']).toBe(readFileSync(out, 'utf8'));
  });
});

describe('bad input: exit 2, one line naming the field, no stack trace, nothing written', () => {
  const invalid = JSON.parse(JSON.stringify(rmsnorm.spec)) as {
    buffers: { name: string }[];
    params: { type: string }[];
  };
  invalid.buffers[0]!.name = 'x_ptr) ; ret; //';
  const wrongType = JSON.parse(JSON.stringify(rmsnorm.spec)) as { params: { type: string }[] };
  wrongType.params[0]!.type = 'f64';
  const cases: [string, () => string[], RegExp][] = [
    ['unknown kernel id', () => ['emit', 'no-such-kernel'], /unknown kernel 'no-such-kernel'/],
    [
      'unreadable file',
      () => ['emit', join(work, 'missing.json')],
      /cannot read .*missing\.json: ENOENT/,
    ],
    [
      'malformed JSON',
      () => ['emit', writeJson('broken.json', '{"id": ')],
      /broken\.json is not valid JSON/,
    ],
    [
      'identifier injection',
      () => ['emit', writeJson('inject.json', invalid)],
      /buffers\[0\]\.name: .* is not an identifier/,
    ],
    [
      'wrong param type',
      () => ['emit', writeJson('type.json', wrongType)],
      /params\[0\]\.type: must be one of f32, i32, u32/,
    ],
    ['unknown arch', () => ['emit', 'rmsnorm', '--arch', 'sm_61'], /arch: unknown arch 'sm_61'/],
    [
      'schedule out of bounds',
      () => ['emit', 'rmsnorm', '--schedule', 'workgroupSize=4096'],
      /schedule\.workgroupSize: 4096 is outside/,
    ],
    [
      'malformed schedule',
      () => ['emit', 'rmsnorm', '--schedule', 'workgroupSize'],
      /schedule: 'workgroupSize' is not key=value/,
    ],
    [
      'unknown target',
      () => ['emit', 'rmsnorm', '--target', 'metal'],
      /--target: unknown target 'metal'/,
    ],
    ['unknown option', () => ['emit', 'rmsnorm', '--fast'], /Unknown option '--fast'/],
    [
      'hash of an invalid spec',
      () => ['hash', writeJson('inject2.json', invalid)],
      /buffers\[0\]\.name/,
    ],
    ['spec of an unknown kernel', () => ['spec', 'nope'], /unknown kernel 'nope'/],
    ['unknown command', () => ['frobnicate'], /unknown command 'frobnicate'/],
  ];
  for (const [name, args, message] of cases) {
    it(name, () => {
      const out = join(work, `${name.replace(/\W+/g, '-')}.out`);
      const argv = args();
      const result = forge(...argv, ...(argv[0] === 'emit' ? ['--out', out] : []));
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(out)).toBe(false);
    });
  }
});

describe('forge list, golden and validate', () => {
  it('lists kernels with versions and targets', () => {
    const text = forge('list');
    expect(text.stdout).toMatch(/^affine-f32\s+v1\s+ptx\(sm_75,sm_80,sm_86,sm_89,sm_90\)/m);
    const json = JSON.parse(forge('list', '--json').stdout) as {
      id: string;
      semanticHash: string;
    }[];
    expect(json.map((kernel) => kernel.id)).toEqual(['affine-f32', 'rmsnorm']);
    expect(json[1]?.semanticHash).toBe(semanticHash(rmsnorm.spec));
  });

  it('checks the golden directory', () => {
    const result = forge('golden', 'check');
    expect(result.stdout).toMatch(/golden check: 7 entries, 0 problem\(s\)/);
    expect(result.code).toBe(0);
  });

  it('validates every golden entry with ptxas and fails on a rejected file', () => {
    const all = forge('validate');
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/validate: 7 passed, 0 failed/);
    expect(all.stdout).toMatch(
      /PASS golden\/ptx\/rmsnorm\.sm_80\.ptx \[sm_80\] Used \d+ registers.*0 bytes spill stores, 0 bytes spill loads/,
    );
    const broken = writeJson(
      'broken.ptx',
      '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tbogus;\n}\n',
    );
    const result = forge('validate', broken);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAIL .*broken\.ptx \[sm_80\] ptxas rejected it/);
  });
});
