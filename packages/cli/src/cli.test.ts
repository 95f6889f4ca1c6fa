import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { semanticHash } from '@forge/ir';
import { CATALOG, rmsnorm } from '@forge/ir/kernels';
import { emitPtx, ptxTarget } from '@forge/ptx';
import { checkoutGoldenDirectory } from './commands/golden.js';
import { opensDawn } from './dawn-log.js';
import { forgeInProcess } from './in-process.test-support.js';
import { goldenEntries } from './golden/entries.js';

const DEFAULT_GOLDEN_DIR = checkoutGoldenDirectory() ?? 'no golden directory';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
/** How many golden files pin a target of this kind. */
const pinned = (kind: string) =>
  goldenEntries().filter((entry) => entry.target.kind === kind).length;

const work = mkdtempSync(join(tmpdir(), 'forge-cli-'));

/** Runs the built binary, as a user does. */
function forgeBinary(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { cwd: work, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * Runs forge in this process, or the built binary for a command that opens Dawn (only the binary
 * filters Dawn's native log off stderr, which these tests check). The binary's own path is checked
 * by the emit test below, the EPIPE and no-adapter tests, and tools/cli-errors.test.mjs.
 */
async function forge(...args: string[]) {
  return opensDawn(args) ? forgeBinary(...args) : await forgeInProcess(work, ...args);
}

function writeJson(name: string, value: unknown): string {
  const path = join(work, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return path;
}

describe('forge emit', () => {
  it('prints the same bytes as the golden file and as the library, from two processes', () => {
    const first = forgeBinary('emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80');
    const second = forgeBinary('emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    expect(first.stdout).toBe(
      readFileSync(join(DEFAULT_GOLDEN_DIR, 'ptx/rmsnorm.sm_80.ptx'), 'utf8'),
    );
    expect(first.stdout).toBe(emitPtx(rmsnorm.spec, {}, ptxTarget('sm_80')).source);
  });

  it('emits a spec file from `forge spec` byte-identically to the kernel id', async () => {
    const spec = await forge('spec', 'rmsnorm');
    expect(spec.code).toBe(0);
    const path = writeJson('rmsnorm.json', spec.stdout);
    const fromFile = await forge(
      'emit',
      path,
      '--arch',
      'sm_90',
      '--schedule',
      'workgroupSize=512',
    );
    const fromId = await forge(
      'emit',
      'rmsnorm',
      '--arch',
      'sm_90',
      '--schedule',
      'workgroupSize=512',
    );
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toBe(fromId.stdout);
    expect((await forge('hash', path)).stdout.trim()).toBe(semanticHash(rmsnorm.spec));
  });

  it('takes a spec whose knobs have no bounds: same hash and bytes, backend limits only', async () => {
    const spec = JSON.parse((await forge('spec', 'rmsnorm')).stdout) as { schedule: object[] };
    expect(spec.schedule).toEqual([expect.objectContaining({ bounds: expect.any(Object) })]);
    const unbounded = {
      ...spec,
      schedule: spec.schedule.map((knob) => ({ ...knob, bounds: undefined })),
    };
    const path = writeJson('rmsnorm-unbounded.json', unbounded);
    expect((await forge('hash', path)).stdout.trim()).toBe(semanticHash(rmsnorm.spec));
    expect((await forge('emit', path, '--arch', 'sm_80')).stdout).toBe(
      readFileSync(join(DEFAULT_GOLDEN_DIR, 'ptx/rmsnorm.sm_80.ptx'), 'utf8'),
    );
    // rmsnorm's ptx bounds stop at 1024 in steps of 32; without them PTX_LIMITS still holds.
    const over = await forge('emit', path, '--arch', 'sm_80', '--schedule', 'workgroupSize=1056');
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/launch\.workgroupSize: 1056 is outside \[1, 1024\] for ptx/);
  });

  it('writes --out and prints the whole GeneratedShader with --json', async () => {
    const out = join(work, 'affine.ptx');
    expect((await forge('emit', 'affine-f32', '--arch', 'sm_75', '--out', out)).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('.target sm_75');
    const json = JSON.parse(
      (await forge('emit', 'affine-f32', '--arch', 'sm_75', '--json')).stdout,
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

describe('a reader that stops early', () => {
  it('ends forge quietly: no EPIPE stack trace, exit 0', () => {
    // `head -c 10` closes the pipe while forge is still writing.
    const run = spawnSync(
      'sh',
      ['-c', `"${process.execPath}" "${BIN}" spec q6k-gemv | head -c 10 >/dev/null`],
      { cwd: work, encoding: 'utf8' },
    );
    expect(run.stderr).toBe('');
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
    it(name, async () => {
      const out = join(work, `${name.replace(/\W+/g, '-')}.out`);
      const argv = args();
      const result = await forge(...argv, ...(argv[0] === 'emit' ? ['--out', out] : []));
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(out)).toBe(false);
    });
  }
});

describe('forge with WGSL', () => {
  it('emits WGSL per feature set, byte-identical to the golden files', async () => {
    const plain = await forge('emit', 'rmsnorm', '--target', 'wgsl');
    const rich = await forge('emit', 'rmsnorm', '--target', 'wgsl', '--features', 'subgroups,f16');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(readFileSync(join(DEFAULT_GOLDEN_DIR, 'wgsl/rmsnorm.wgsl'), 'utf8'));
    expect(rich.stdout).toBe(
      readFileSync(join(DEFAULT_GOLDEN_DIR, 'wgsl/rmsnorm.f16-subgroups.wgsl'), 'utf8'),
    );
    const json = JSON.parse(
      (await forge('emit', 'affine-f32', '--target', 'wgsl', '--json')).stdout,
    ) as {
      launch: { bindings: unknown[] };
    };
    expect(json.launch.bindings).toHaveLength(3);
  });

  it('validates WGSL with Tint, errors as file:line:col', async () => {
    const all = await forge('validate', '--target', 'wgsl');
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(`validate: ${pinned('wgsl')} passed, 0 failed`);
    const broken = writeJson(
      'broken.wgsl',
      '@compute @workgroup_size(1)\nfn main() {\n  let x = missing;\n}\n',
    );
    const result = await forge('validate', '--target', 'wgsl', broken);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/broken\.wgsl:3:11: error: unresolved value 'missing'/);
    // .wgsl files alone are WGSL without --target; mixed with PTX they need it.
    const inferred = await forge('validate', broken);
    expect([inferred.code, inferred.stderr]).toEqual([1, '']);
    expect(inferred.stdout).toMatch(/broken\.wgsl:3:11: error: unresolved value 'missing'/);
    const mixed = await forge('validate', broken, 'kernel.ptx');
    expect([mixed.code, mixed.stdout]).toEqual([2, '']);
    expect(mixed.stderr).toMatch(/^forge validate: --target: the files mix \.wgsl and other files/);
  });

  it('runs rmsnorm on WebGPU within tolerance and prints the error figures', async () => {
    const result = await forge(
      'run',
      'rmsnorm',
      '--target',
      'wgsl',
      '--shape',
      'n_embd=4096',
      '--shape',
      'rows=3',
    );
    expect(result.code).toBe(0);
    // Dawn's adapter warnings (lavapipe: maxDynamic…BuffersPerPipelineLayout) are filtered out.
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /^rmsnorm on wgsl \(features none\), schedule default, shape n_embd=4096 rows=3, seed 1$/m,
    );
    expect(result.stdout).toMatch(
      /max abs error \S+ {2}max rel error \S+ {2}NMSE \S+ {2}tolerance 1e-10 {2}PASS/,
    );
    expect(result.stdout).toMatch(/run time \d+\.\d+ ms/);
  });

  it('runs on raw input files and writes raw outputs, matching the interpreter', async () => {
    const x = new Float32Array(257).map((_, index) => Math.sin(index));
    writeFileSync(join(work, 'x.f32'), new Uint8Array(x.buffer));
    const outputs: Float32Array[] = [];
    for (const target of ['wgsl', 'interp']) {
      const result = await forge(
        'run',
        'affine-f32',
        '--target',
        target,
        '--shape',
        'n=257',
        '--input',
        'x=@x.f32',
        '--output',
        `y=y-${target}.f32`,
        '--json',
      );
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as { nmse: number; pass: boolean };
      expect(report.pass).toBe(true);
      const bytes = readFileSync(join(work, `y-${target}.f32`));
      outputs.push(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    }
    expect(outputs[0]?.length).toBe(257);
    expect(outputs[0]?.[10]).toBeCloseTo(Math.fround(Math.sin(10)) * 1.5 - 0.25, 6);
    // lavapipe may not fuse fma, so the engines agree to within an ulp or two, not bit for bit
    const difference = Array.from(outputs[0] ?? [], (value, index) =>
      Math.abs(value - (outputs[1]?.[index] ?? Number.NaN)),
    );
    expect(Math.max(...difference)).toBeLessThan(1e-6);
  });

  it('says how to install a WebGPU driver and exits 1 when Dawn finds no adapter', () => {
    const run = spawnSync(process.execPath, [BIN, 'run', 'rmsnorm', '--target', 'wgsl'], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, VK_ICD_FILENAMES: '/nonexistent.json' },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^forge run: no WebGPU adapter: .*bash tools\/setup-webgpu\.sh[^\n]*\n$/,
    );
  });

  it('takes a buffer the kernel updates in place (rope q) as an input and writes it back', async () => {
    writeFileSync(join(work, 'q.f32'), new Uint8Array(new Float32Array([1, 0, 0, 2]).buffer));
    const shape = ['n_head=2', 'n_kv_head=1', 'head_dim=2', 'pos=1', 'max_ctx=2', 'neox=0'];
    const result = await forge(
      'run',
      'rope',
      '--target',
      'interp',
      ...shape.flatMap((value) => ['--shape', value]),
      '--input',
      'q=@q.f32',
      '--output',
      'q=q-out.f32',
    );
    expect(result.code).toBe(0);
    const bytes = readFileSync(join(work, 'q-out.f32'));
    const q = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, 4));
    // Position 1 turns pair 0 by one radian: (1, 0) to (cos 1, sin 1), (0, 2) to (−2 sin 1, 2 cos 1).
    const expected = [Math.cos(1), Math.sin(1), -2 * Math.sin(1), 2 * Math.cos(1)];
    q.forEach((value, index) => expect(value).toBeCloseTo(expected[index] ?? Number.NaN, 6));
    const output = await forge('run', 'rmsnorm', '--input', 'y=@q.f32');
    expect(output.code).toBe(2);
    expect(output.stderr).toMatch(/'y' is not an input buffer of rmsnorm \(inputs: x, w\)/);
  });

  it('exits 1 when the result is over tolerance', async () => {
    // NaN inputs make the comparison fail: a run that cannot be checked must not pass.
    writeFileSync(
      join(work, 'nan.f32'),
      new Uint8Array(new Float32Array(4).fill(Number.NaN).buffer),
    );
    const result = await forge(
      'run',
      'affine-f32',
      '--target',
      'interp',
      '--shape',
      'n=4',
      '--input',
      'x=@nan.f32',
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/NMSE Infinity {2}tolerance 1e-10 {2}FAIL/);
  });

  it('rejects bad run input with exit 2 and one line', async () => {
    writeFileSync(join(work, 'short.f32'), new Uint8Array(12));
    const cases: [string[], RegExp][] = [
      [
        ['run', 'rmsnorm', '--shape', 'cols=3'],
        /--shape: unknown shape 'cols' for rmsnorm \(known: n_embd, rows\)/,
      ],
      [
        ['run', 'affine-f32', '--shape', 'n=8', '--input', 'x=@short.f32'],
        /--input x: short\.f32 has 12 bytes; affine-f32 with this shape needs 32 \(8 f32 values\)/,
      ],
      [
        ['run', 'affine-f32', '--input', 'z=@short.f32'],
        /--input: 'z' is not an input buffer of affine-f32/,
      ],
      [['run', 'affine-f32', '--target', 'metal'], /--target: 'metal' cannot run kernels/],
      [
        ['run', 'rmsnorm', '--target', 'wgsl', '--schedule', 'workgroupSize=2048'],
        /schedule\.workgroupSize: 2048 is outside/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await forge(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      // Dawn's own log lines are filtered out: the error is the only line.
      expect(result.stderr).toMatch(/^forge run: [^\n]*\n$/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('forge sim and the ptx-sim engine', () => {
  const fixtures = fileURLToPath(new URL('../../ptx-sim/src/fixtures/', import.meta.url));

  it('runs a kernel nvcc compiled from CUDA C and dumps its output', async () => {
    const x = new Float32Array(1000).map((_, index) => Math.sin(index) * 10);
    writeFileSync(join(work, 'sum-x.bin'), new Uint8Array(x.buffer));
    const result = await forge(
      'sim',
      join(fixtures, 'block-sum.sm_80.ptx'),
      '--entry',
      'block_sum',
      '--grid',
      '4',
      '--block',
      '256,1,1',
      '--arg',
      'block_sum_param_0=@sum-x.bin',
      '--arg',
      'block_sum_param_1=zeros:16',
      '--arg',
      'block_sum_param_2=u32:1000',
      '--dump',
      'block_sum_param_1=sums.bin',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^0 finding\(s\)$/m);
    expect(result.stdout).toMatch(/sector efficiency \d+\.\d%/);
    // 1000 f32 of x stream through L2 once: 125 sectors from DRAM, nothing else is read.
    expect(result.stdout).toMatch(/DRAM read 4000 B/);
    const bytes = readFileSync(join(work, 'sums.bin'));
    const sums = new Float32Array(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    );
    for (let block = 0; block < 4; block++) {
      const expected = Array.from(x.slice(block * 256, Math.min(1000, (block + 1) * 256))).reduce(
        (sum, value) => sum + value,
        0,
      );
      expect(sums[block]).toBeCloseTo(expected, 3);
    }
  });

  it('packs .b8 array parameters from pack:T:V,...', async () => {
    writeFileSync(
      join(work, 'packed.ptx'),
      '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry packed(.param .u64 out, .param .align 4 .b8 pair[8])\n{\n' +
        '\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n' +
        '\tld.param.u32 %r1, [pair];\n\tld.param.u32 %r2, [pair+4];\n\tadd.s32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2], %r3;\n\tret;\n}\n',
    );
    const result = await forge(
      'sim',
      'packed.ptx',
      '--grid',
      '1',
      '--block',
      '1',
      '--arg',
      'out=zeros:4',
      '--arg',
      'pair=pack:u32:40,i32:2',
      '--dump',
      'out=packed.bin',
    );
    expect(result.code).toBe(0);
    expect(readFileSync(join(work, 'packed.bin')).readUInt32LE(0)).toBe(42);
    const short = await forge(
      'sim',
      'packed.ptx',
      '--grid',
      '1',
      '--block',
      '1',
      '--arg',
      'out=zeros:4',
      '--arg',
      'pair=pack:u32:40',
    );
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/parameter 'pair' takes 8 bytes, got 4/);
  });

  it('prints one line per finding and exits 1', async () => {
    const race = [
      'sim',
      join(fixtures, 'sanitizer/shared-race.ptx'),
      '--grid',
      '1',
      '--block',
      '32',
    ];
    const result = await forge(...race, '--arg', 'out=zeros:128');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^shared-race at line 22: read of shared bytes .* \[ld\.shared\.u32 %r7, \[%r6\];\] \(cta 0,0,0 thread \d+,0,0\)/m,
    );
    const json = JSON.parse((await forge(...race, '--arg', 'out=zeros:128', '--json')).stdout) as {
      findings: string[];
      warpInstructions: number;
    };
    expect(json.findings).toHaveLength(1);
    expect(json.warpInstructions).toBeGreaterThan(0);
  });

  it('rejects bad simulator input with exit 2 and one line', async () => {
    writeFileSync(
      join(work, 'unsupported.ptx'),
      '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate.b32 %r1;\n\tret;\n}\n',
    );
    const blockSum = join(fixtures, 'block-sum.sm_80.ptx');
    const cases: [string[], RegExp][] = [
      [
        ['sim', blockSum, '--grid', '1', '--block', '32', '--arg', 'nope=u32:1'],
        /unknown parameter 'nope'/,
      ],
      [
        ['sim', blockSum, '--grid', '1', '--block', '32', '--arg', 'block_sum_param_0=zeros:4'],
        /missing argument for parameter 'block_sum_param_1'/,
      ],
      [
        ['sim', join(work, 'unsupported.ptx'), '--grid', '1', '--block', '1'],
        /line 6: .*frobnicate/,
      ],
      [
        ['sim', blockSum, '--grid', '1,2,3,4', '--block', '32'],
        /--grid: '1,2,3,4' is not 1 to 3 positive integers/,
      ],
      [['sim', blockSum, '--block', '32'], /--grid is required/],
      [
        ['sim', blockSum, '--grid', '1', '--block', '32', '--arg', 'block_sum_param_2=f64:1'],
        /--arg block_sum_param_2: unknown kind 'f64'/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await forge(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it("adds the timing model's estimate for --gpu to forge sim and forge run --target ptx-sim", async () => {
    const simArgs = ['sim', join(fixtures, 'block-sum.sm_80.ptx'), '--grid', '4', '--block', '32'];
    const simArgsWithBuffers = [
      ...simArgs,
      '--arg',
      'block_sum_param_0=zeros:512',
      '--arg',
      'block_sum_param_1=zeros:16',
      '--arg',
      'block_sum_param_2=u32:128',
      '--gpu',
      'h100',
    ];
    const text = await forge(...simArgsWithBuffers);
    expect(text.stdout).toMatch(
      /^estimate H100: [\d.]+ (µs|ms), \d+% of DRAM bandwidth, launch-bound; 1 warp\/SM \(1 block resident, room for 32 by blocks\), 4 of 132 SMs, 1 wave; .* launch 2\.10 µs$/m,
    );
    const sim = JSON.parse((await forge(...simArgsWithBuffers, '--json')).stdout) as {
      estimate: Record<string, unknown>;
    };
    expect(Object.keys(sim.estimate)).toEqual(
      expect.arrayContaining([
        'gpu', 'seconds', 'bandwidthFraction', 'bound', 'registers', 'residentWarpsPerSm',
        'bytesInFlightPerSm', 'dramRoundTripsPerWarp', 'sharedWavefronts', 'sharedWavefrontsMinimum',
        'launchSeconds', 'totalSeconds', 'sampled',
      ]),
    ); // prettier-ignore
    expect(sim.estimate).toMatchObject({ gpu: 'H100', sampled: false, residentWarpsPerSm: 1 });
    // ptxas's count for sm_90, or the one --registers gives.
    expect(sim.estimate['registers']).toBeGreaterThan(0);
    const given = JSON.parse((await forge(...simArgsWithBuffers, '--registers', '200', '--json')).stdout) as { estimate: Record<string, unknown> }; // prettier-ignore
    expect(given.estimate['registers']).toBe(200);
    const run = await forge(
      'run',
      'rmsnorm',
      '--target',
      'ptx-sim',
      '--shape',
      'n_embd=300',
      '--gpu',
      'A100',
      '--json',
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      estimate: { gpu: string; seconds: number; launchSeconds: number; totalSeconds: number };
    };
    expect(report.estimate.gpu).toBe('A100');
    expect(report.estimate.seconds).toBeGreaterThan(0);
    expect(report.estimate.launchSeconds).toBe(2.6e-6);
    expect(report.estimate.totalSeconds).toBeCloseTo(report.estimate.seconds + 2.6e-6, 15);
    const graph = JSON.parse((await forge('run', 'rmsnorm', '--target', 'ptx-sim', '--shape', 'n_embd=300', '--gpu', 'A100', '--graph', '--json')).stdout) as typeof report; // prettier-ignore
    expect(graph.estimate.launchSeconds).toBe(1.34e-6);
  });

  it('estimates a large grid from a sample of workgroups that do identical work', async () => {
    const args = [
      'run',
      'f16-gemv',
      '--target',
      'ptx-sim',
      '--shape',
      'n_out=64',
      '--shape',
      'n_in=256',
      // One row a workgroup: 64 workgroups doing identical work.
      '--schedule',
      'workgroupSize=32',
      '--gpu',
      'H200',
    ];
    const whole = JSON.parse((await forge(...args, '--json')).stdout) as {
      estimate: Record<string, number>;
    };
    const sampled = await forge(...args, '--sample-blocks', '3', '--json');
    expect(sampled.code).toBe(0);
    const report = JSON.parse(sampled.stdout) as {
      checked: boolean;
      estimate: Record<string, number | boolean>;
    };
    expect(report.checked).toBe(false);
    expect(report.estimate['sampled']).toBe(true);
    expect(report.estimate['sampledWorkgroups']).toBe(3);
    // The busiest SM runs block 0 either way: the same trace, the same time.
    expect(report.estimate['seconds']).toBeCloseTo(whole.estimate['seconds'] ?? 0, 15);
    // A sample's DRAM bytes scale from its workgroups: close to the whole grid's, not exact.
    const dram = [report.estimate['dramBytes'], whole.estimate['dramBytes']] as number[];
    expect(Math.abs((dram[0] ?? 0) / (dram[1] ?? 1) - 1)).toBeLessThan(0.1);
    const text = await forge(...args, '--sample-blocks', '3');
    expect(text.stdout).toMatch(/, estimated from 3 of \d+ workgroups$/m);
    expect(text.stdout).toMatch(/^not checked against the reference/m);
  });

  it('estimates a multi-dispatch kernel (sdpa-decode) dispatch by dispatch, each on its own grid', async () => {
    const shape = (nKv: number) =>
      ['n_head=8', 'n_kv_head=2', 'head_dim=32', `n_kv=${nKv}`, 'max_ctx=600'].flatMap((value) => [
        '--shape',
        value,
      ]);
    // Two splits: a split takes 128 positions by default, so 512 would make four.
    const args = [
      'run',
      'sdpa-decode',
      '--target',
      'ptx-sim',
      '--gpu',
      'H200',
      '--schedule',
      'splits=2',
    ];
    const whole = await forge(...args, ...shape(512), '--json');
    expect(whole.code).toBe(0);
    const report = JSON.parse(whole.stdout) as {
      pass: boolean;
      estimate: {
        seconds: number;
        launchSeconds: number;
        bound: string;
        dispatches: { seconds: number; bound: string }[];
      };
    };
    expect(report.pass).toBe(true);
    // The split-KV main dispatch, then the combine: summed, each with its launch gap.
    const [main, combine] = report.estimate.dispatches;
    expect(report.estimate.dispatches).toHaveLength(2);
    expect(main?.seconds).toBeGreaterThan(combine?.seconds ?? Infinity);
    expect(combine?.seconds).toBeGreaterThan(0);
    expect(report.estimate.seconds).toBeCloseTo((main?.seconds ?? 0) + (combine?.seconds ?? 0), 15);
    expect(report.estimate.launchSeconds).toBeCloseTo(2 * 2.4e-6, 15);
    if (report.estimate.launchSeconds > report.estimate.seconds)
      expect(report.estimate.bound).toBe('launch');
    const text = await forge(...args, ...shape(512));
    expect(text.stdout).toMatch(
      /^estimate H200: [\d.]+ µs in 2 kernels \([\d.]+ µs \w+-bound \+ [\d.]+ µs \w+-bound\), \d+% of DRAM bandwidth, \w+-bound; with stream launch gaps [\d.]+ µs$/m,
    );
    // 512 positions make two equal splits: each dispatch's sample stands for its grid.
    const sampled = await forge(...args, ...shape(512), '--sample-blocks', '3', '--json');
    expect(sampled.code).toBe(0);
    const { estimate } = JSON.parse(sampled.stdout) as {
      estimate: Record<string, number> & { dispatches: { seconds: number }[] };
    };
    expect(estimate.dispatches[0]?.seconds).toBeCloseTo(main?.seconds ?? 0, 15);
    // The combine reads the partials from L2, where the sampled split pass left 3 of its 4 blocks'
    // (the 4th's from DRAM): 1.7% of the total at 8/2 heads of 32, 512 positions.
    expect(Math.abs((estimate['seconds'] ?? 0) / report.estimate.seconds - 1)).toBeLessThan(0.03);
    // 4 + 8 workgroups, of which 3 + 3 ran.
    expect([estimate['sampledWorkgroups'], estimate['workgroups']]).toEqual([6, 12]);
    // 600 positions leave the last split shorter: its sample is refused.
    const unequal = await forge(...args, ...shape(600), '--sample-blocks', '3');
    expect(unequal.code).toBe(2);
    expect(unequal.stderr).toMatch(
      /^forge run: --sample-blocks: .*not identical work; simulate the whole grid\n$/,
    );
  });

  it('takes a shape of 0 where the kernel allows it (sdpa-decode window) and names it otherwise', async () => {
    const shape = ['--shape', 'n_head=4', '--shape', 'n_kv_head=1', '--shape', 'head_dim=32'];
    const run = (...more: string[]) =>
      forge('run', 'sdpa-decode', '--target', 'interp', ...shape, ...more, '--json');
    const none = await run('--shape', 'n_kv=5', '--shape', 'window=0');
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ pass: true, shape: { window: 0, n_kv: 5 } });
    const empty = await run('--shape', 'n_kv=0');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^forge run: invalid input: n_kv: 0 is not at least 1\n$/);
    // Kernels without a shape check of their own take sizes from 1.
    const affine = await forge('run', 'affine-f32', '--target', 'interp', '--shape', 'n=0');
    expect(affine.code).toBe(2);
    expect(affine.stderr).toMatch(/n=0 is outside \[1, 268435456\]/);
  });

  it('runs a catalog kernel on the simulator with counters in --json', async () => {
    const result = await forge(
      'run',
      'rmsnorm',
      '--target',
      'ptx-sim',
      '--arch',
      'sm_75',
      '--shape',
      'n_embd=300',
      '--json',
    );
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      pass: boolean;
      nmse: number;
      simulator: {
        findings: unknown[];
        warpInstructions: number;
        sectorEfficiency: number;
        dramBytesRead: number;
        buffers: Record<string, { bytesRead: number; dramBytesRead: number }>;
      };
    };
    expect(report.pass).toBe(true);
    expect(report.simulator.findings).toEqual([]);
    expect(report.simulator.warpInstructions).toBeGreaterThan(0);
    expect(report.simulator.sectorEfficiency).toBeGreaterThan(0.9);
    const buffers = Object.values(report.simulator.buffers);
    expect(report.simulator.dramBytesRead).toBe(
      buffers.reduce((sum, buffer) => sum + buffer.dramBytesRead, 0),
    );
    expect(report.simulator.dramBytesRead).toBeGreaterThan(0);
    expect(report.simulator.dramBytesRead).toBeLessThan(
      buffers.reduce((sum, buffer) => sum + buffer.bytesRead, 0),
    );
  });
});

describe('forge <command> --help', () => {
  it("prints each command's usage and exits 0, before reading any other argument", async () => {
    const commands = ['list', 'emit', 'golden', 'validate', 'run', 'sim', 'hash', 'spec', 'quant'];
    for (const command of commands) {
      for (const args of [
        [command, '--help'],
        [command, 'no-such-kernel', '--bogus', '-h'],
      ]) {
        const result = await forge(...args);
        expect([result.code, result.stderr]).toEqual([0, '']);
        expect(result.stdout).toMatch(new RegExp(`^usage: forge ${command}\\b.*\\n$`));
      }
    }
  });
});

describe('forge list, golden and validate', () => {
  it('lists kernels with versions and targets', async () => {
    const text = await forge('list');
    expect(text.stdout).toMatch(
      /^affine-f32\s+v1\s+ptx\(sm_75,sm_80,sm_86,sm_89,sm_90\) wgsl\(features f16,subgroups\)/m,
    );
    const json = JSON.parse((await forge('list', '--json')).stdout) as {
      id: string;
      semanticHash: string;
    }[];
    expect(json.map((kernel) => kernel.id)).toEqual([...CATALOG.keys()]);
    expect(json[1]?.semanticHash).toBe(semanticHash(rmsnorm.spec));
  });

  it('checks the golden directory', async () => {
    const result = await forge('golden', 'check');
    expect(result.stdout).toContain(
      `golden check: ${goldenEntries().length} entries, 0 problem(s)`,
    );
    expect(result.code).toBe(0);
  });

  it('validates every golden entry with ptxas and fails on a rejected file', async () => {
    const all = await forge('validate');
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(`validate: ${pinned('ptx')} passed, 0 failed`);
    expect(all.stdout).toMatch(
      /PASS golden\/ptx\/rmsnorm\.sm_80\.ptx \[sm_80\] Used \d+ registers.*0 bytes spill stores, 0 bytes spill loads/,
    );
    const broken = writeJson(
      'broken.ptx',
      '.version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tbogus;\n}\n',
    );
    const result = await forge('validate', broken);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAIL .*broken\.ptx \[sm_80\] ptxas rejected it/);
  });
});
