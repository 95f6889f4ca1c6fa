// The CLI's failure paths, one case per bad input (issue #10 items 14-21 and the other commands'
// mistakes): the command line, the exit code and the one stderr line it must give. Shared by
// cli-errors.test.mjs, which asserts them, and cli-error-table.mjs, which prints the table.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '@forge/cli';
import { ROOT } from './workspace.mjs';

export const FORGE_BIN = join(ROOT, 'packages', 'cli', 'dist', 'bin.js');

const ESC = '\u001b';

const LOOP_PTX = [
  '.version 7.0',
  '.target sm_80',
  '.address_size 64',
  '.visible .entry spin(.param .u64 out, .param .u32 n)',
  '{',
  '\t.reg .b32 %r<3>;',
  '\tmov.u32 %r1, 0;',
  '$L_loop:',
  '\tadd.s32 %r1, %r1, 1;',
  '\tbra.uni $L_loop;',
  '\tret;',
  '}',
  '',
].join('\n');

/**
 * Writes the files the cases read into `work`: specs, PTX, WGSL, a directory and a plain file; a
 * FIFO, a link to /dev/null and a sparse spec file over the 16 MiB limit (no disk taken).
 */
export function prepareScratch(work) {
  writeFileSync(join(work, 'broken.json'), '{"id": ');
  const spec = JSON.parse(
    spawnSync(process.execPath, [FORGE_BIN, 'spec', 'rmsnorm'], { encoding: 'utf8' }).stdout,
  );
  spec.buffers[0].name = 'x_ptr) ; ret; //';
  writeFileSync(join(work, 'inject.json'), JSON.stringify(spec));
  writeFileSync(join(work, 'loop.ptx'), LOOP_PTX);
  writeFileSync(
    join(work, 'broken.wgsl'),
    '@compute @workgroup_size(1)\nfn main() {\n  let x = missing;\n}\n',
  );
  writeFileSync(join(work, 'x.f32'), new Uint8Array(128));
  writeFileSync(join(work, 'afile'), 'a regular file\n');
  mkdirSync(join(work, 'adir'));
  mkdirSync(join(work, 'somedir'));
  writeFileSync(join(work, 'somedir', 'notes.txt'), 'not golden files\n');
  execFileSync('mkfifo', [join(work, 'fifo')]);
  symlinkSync('/dev/null', join(work, 'null.lnk'));
  writeFileSync(join(work, 'huge.json'), '');
  truncateSync(join(work, 'huge.json'), 17 * 2 ** 20);
}

const SIM = ['sim', 'loop.ptx', '--grid', '1', '--block', '32'];
const SIM_OK_ARGS = ['--arg', 'out=zeros:4', '--arg', 'n=u32:1'];
const QUANT = [
  'quant',
  'quantize',
  '--type',
  'q8_0',
  '--rows',
  '1',
  '--cols',
  '32',
  '--in',
  'x.f32',
];

/** One case (see CASES). */
const bad = (args, exit, stderr, stdout) => ({ args, exit, stderr, stdout });

/**
 * Each case: `args` (run in the scratch directory), the `exit` code, `stderr` (a pattern the single
 * stderr line must match, or null for no stderr at all) and, where a check's report is expected on
 * stdout, a `stdout` pattern (otherwise stdout must be empty).
 */
export const CASES = [
  // emit
  bad(['emit', 'no-such-kernel'], 2, /^forge emit: unknown kernel 'no-such-kernel'/),
  bad(['emit', 'missing.json'], 2, /^forge emit: cannot read missing\.json: ENOENT$/),
  bad(['emit', 'broken.json'], 2, /^forge emit: broken\.json is not valid JSON/),
  bad(['emit', 'inject.json'], 2, /^forge emit: invalid input: buffers\[0\]\.name: /),
  bad(['emit', 'rmsnorm', '--arch', 'sm_61'], 2, /arch: unknown arch 'sm_61'/),
  bad(['emit', 'rmsnorm', '--target', 'metal'], 2, /--target: unknown target 'metal'/),
  bad(['emit', 'rmsnorm', '--fast'], 2, /^forge emit: Unknown option '--fast'/),
  bad(['emit', 'rmsnorm', '--out'], 2, /^forge emit: Option '--out <value>' argument missing/),
  bad(
    ['emit', 'rmsnorm', '--schedule', '__proto__=1'],
    2,
    /schedule\.__proto__: unknown schedule knob \(known: workgroupSize\)$/,
  ),
  bad(
    ['emit', 'rmsnorm', '--schedule', 'constructor=1'],
    2,
    /schedule\.constructor: unknown schedule knob/,
  ),
  bad(
    ['emit', 'rmsnorm', '--schedule', 'workgroupSize=4096'],
    2,
    /schedule\.workgroupSize: 4096 is outside/,
  ),
  bad(
    ['emit', 'rmsnorm', '--schedule', 'workgroupSize=99999999999'],
    2,
    /schedule: 'workgroupSize=99999999999' is not key=value/,
  ),
  bad(
    ['emit', 'rmsnorm', '--out', '/nonexistent/x.ptx'],
    2,
    /^forge emit: --out: cannot write \/nonexistent\/x\.ptx: directory \/nonexistent does not exist$/,
  ),
  bad(
    ['emit', 'rmsnorm', '--out', 'adir'],
    2,
    /^forge emit: --out: cannot write adir: it is a directory$/,
  ),
  bad(['emit', `${ESC}[31mred.json`], 2, /^forge emit: cannot read \\u001b\[31mred\.json: ENOENT$/),
  bad(['emit', 'a\nb.json'], 2, /^forge emit: cannot read a\\nb\.json: ENOENT$/),
  // Inputs and outputs that are not regular files (issue #26 rows 12 and 13): refused, not waited
  // on, not read without end, not replaced.
  bad(
    ['emit', '/dev/zero'],
    2,
    /^forge emit: \/dev\/zero is not a regular file \(a character device\)$/,
  ),
  bad(['emit', './fifo'], 2, /^forge emit: \.\/fifo is not a regular file \(a FIFO\)$/),
  bad(['emit', 'adir/'], 2, /^forge emit: adir\/ is not a regular file \(a directory\)$/),
  bad(
    ['emit', 'huge.json'],
    2,
    /^forge emit: huge\.json has 17825792 bytes; a spec file may have at most 16777216 \(16 MiB\)$/,
  ),
  bad(
    ['emit', 'rmsnorm', '--out', 'fifo'],
    2,
    /^forge emit: --out: fifo is not a regular file \(a FIFO\); forge writes only regular files$/,
  ),
  bad(
    ['emit', 'rmsnorm', '--out', 'null.lnk'],
    2,
    /^forge emit: --out: null\.lnk \(a link to \/dev\/null\) is not a regular file \(a character device\); forge writes only regular files$/,
  ),
  // run
  bad(['run', 'nope'], 2, /^forge run: unknown kernel 'nope'/),
  bad(
    [
      'run',
      'rmsnorm',
      '--target',
      'ptx-sim',
      '--gpu',
      'H200',
      '--sample-blocks',
      '2',
      '--output',
      'y=y.bin',
    ],
    2,
    /^forge run: --sample-blocks: a sampled run leaves outputs incomplete; drop --output$/,
  ),
  bad(
    ['run', 'rmsnorm', '--target', 'ptx-sim', '--gpu', 'B300'],
    2,
    /^forge run: --gpu: unknown GPU 'B300' \(known: A100, H100, H200\)$/,
  ),
  bad(
    ['run', 'rmsnorm', '--gpu', 'H200'],
    2,
    /^forge run: --gpu: estimates time the simulator's instruction streams; add --target ptx-sim$/,
  ),
  bad(
    ['run', 'rmsnorm', '--target', 'ptx-sim', '--graph'],
    2,
    /^forge run: --graph: launch gaps only feed an estimate; add --gpu NAME$/,
  ),
  bad(
    ['run', 'rmsnorm', '--output', 'y=/nonexistent/y'],
    2,
    /^forge run: --output y: cannot write \/nonexistent\/y: directory \/nonexistent does not exist$/,
  ),
  bad(
    ['run', 'rmsnorm', '--output', 'y=out.f32', '--output', 'y=/nonexistent/z'],
    2,
    /^forge run: --output: 'y' is given twice$/,
  ),
  bad(
    ['run', 'rmsnorm', '--output', 'y=out.f32', '--output', 'x=/nonexistent/z'],
    2,
    /^forge run: --output x: cannot write \/nonexistent\/z/,
  ),
  bad(
    ['run', 'rmsnorm', '--output', 'y=same.f32', '--output', 'x=./same.f32'],
    2,
    /^forge run: --output x: \.\/same\.f32 is already written by --output y$/,
  ),
  bad(
    ['run', 'rmsnorm', '--output', '__proto__=p.bin'],
    2,
    /^forge run: --output: '__proto__' is not a buffer of rmsnorm/,
  ),
  bad(
    ['run', 'rmsnorm', '--input', 'constructor=@x.f32'],
    2,
    /^forge run: --input: 'constructor' is not an input buffer of rmsnorm/,
  ),
  bad(
    ['run', 'rmsnorm', '--seed', '-1'],
    2,
    /^forge run: Option '--seed' argument is ambiguous; to specify an option argument starting with a dash use '--seed=-XYZ'; usage: /,
  ),
  bad(
    ['run', 'rmsnorm', '--seed=-1'],
    2,
    /^forge run: --seed: '-1' is not a non-negative integer$/,
  ),
  bad(
    ['run', 'rmsnorm', '--shape', 'n_embd=0'],
    2,
    /--shape: n_embd=0 is outside \[1, 268435456\]$/,
  ),
  bad(
    ['run', 'rmsnorm', '--target', 'wgsl', '--output', 'y=/nonexistent/y'],
    2,
    /^forge run: --output y: cannot write \/nonexistent\/y/,
  ),
  bad(['run', 'rmsnorm', '--target', 'wgsl', '--features', 'fp64'], 2, /^forge run: .*fp64/),
  bad(
    ['run', 'rmsnorm', '--target', 'metal'],
    2,
    /^forge run: --target: 'metal' cannot run kernels/,
  ),
  bad(
    ['run', 'affine-f32', '--shape', 'n=268435456'],
    2,
    /^forge run: --shape: affine-f32 at n=268435456 needs 2147483648 bytes of buffers, over the 1073741824 \(1 GiB\) a run may take$/,
  ),
  bad(
    ['run', 'rmsnorm', '--shape', 'n_embd=268435456', '--shape', 'rows=268435456'],
    2,
    /^forge run: --shape: rmsnorm at n_embd=268435456 rows=268435456 needs \d+ bytes/,
  ),
  bad(
    ['run', 'affine-f32', '--input', 'x=@/dev/zero'],
    2,
    /^forge run: --input x: \/dev\/zero is not a regular file \(a character device\)$/,
  ),
  bad(
    ['run', 'affine-f32', '--input', 'x=@fifo'],
    2,
    /^forge run: --input x: fifo is not a regular file \(a FIFO\)$/,
  ),
  bad(
    ['run', 'affine-f32', '--shape', 'n=31', '--input', 'x=@x.f32'],
    2,
    /^forge run: --input x: x\.f32 has 128 bytes; affine-f32 with this shape needs 124 \(31 f32 values\)$/,
  ),
  bad(
    ['run', 'affine-f32', '--output', 'y=fifo'],
    2,
    /^forge run: --output y: fifo is not a regular file \(a FIFO\); forge writes only regular files$/,
  ),
  bad(
    ['run', 'affine-f32', '--output', 'y=null.lnk'],
    2,
    /^forge run: --output y: null\.lnk \(a link to \/dev\/null\) is not a regular file/,
  ),
  // decode: --logits is checked before the model is read
  bad(
    ['decode', 'missing.gguf', '--tokens', '1', '--target', 'interp', '--logits', 'fifo'],
    2,
    /^forge decode: --logits: fifo is not a regular file \(a FIFO\); forge writes only regular files$/,
  ),
  // quant
  bad(
    [...QUANT, '--out', '/nonexistent/q'],
    2,
    /^forge quant: --out: cannot write \/nonexistent\/q/,
  ),
  bad([...QUANT, '--out', 'adir'], 2, /^forge quant: --out: cannot write adir: it is a directory$/),
  bad(
    [
      'quant',
      'quantize',
      '--type',
      'q8_0',
      '--rows',
      '0',
      '--cols',
      '32',
      '--in',
      'x.f32',
      '--out',
      'q.bin',
    ],
    2,
    /^forge quant: --rows: '0' is not a positive integer$/,
  ),
  bad(['quant', 'quantize', '--type', 'q9_9'], 2, /^forge quant: --type: unknown type 'q9_9'/),
  bad(
    [...QUANT.slice(0, -1), '/dev/zero', '--out', 'q.bin'],
    2,
    /^forge quant: --in: \/dev\/zero is not a regular file \(a character device\)$/,
  ),
  bad(
    [...QUANT, '--out', 'fifo'],
    2,
    /^forge quant: --out: fifo is not a regular file \(a FIFO\); forge writes only regular files$/,
  ),
  // sim
  bad(
    [...SIM, '--gpu', 'v100'],
    2,
    /^forge sim: --gpu: unknown GPU 'v100' \(known: A100, H100, H200\)$/,
  ),
  bad(
    [...SIM, '--registers', '32'],
    2,
    /^forge sim: --registers: a register count only feeds an estimate; add --gpu NAME$/,
  ),
  bad([...SIM, '--gpu', 'H200', '--registers', '300'], 2, /^forge sim: --registers: .*300/),
  bad(
    ['sim', 'missing.ptx', '--grid', '1', '--block', '1'],
    2,
    /^forge sim: cannot read missing\.ptx: ENOENT$/,
  ),
  bad(
    [...SIM, '--arg', 'out=zeros:9999999999'],
    2,
    /^forge sim: --arg out: '9999999999' is not a byte count in \[0, 1073741824\]/,
  ),
  bad([...SIM, '--arg', 'out=pack:u64:1.5'], 2, /^forge sim: --arg out: '1\.5' is not a u64/),
  bad(
    [...SIM, '--arg', 'n=u32:4294967296'],
    2,
    /^forge sim: --arg n: '4294967296' is not a u32 \(an integer in \[0, 4294967295\]\)/,
  ),
  bad([...SIM, '--arg', 'n=u32:-5'], 2, /^forge sim: --arg n: '-5' is not a u32/),
  bad(
    [...SIM, '--arg', 'n=i32:99999999999'],
    2,
    /^forge sim: --arg n: '99999999999' is not an i32/,
  ),
  bad([...SIM, '--arg', 'n=f32:1e39'], 2, /^forge sim: --arg n: '1e39' is not a finite f32 number/),
  bad(
    [...SIM, '--arg', 'n=u64:4294967296', '--arg', 'out=zeros:4'],
    2,
    /^forge sim: parameter 'n' is \.u32; 4294967296 does not fit in 32 bits$/,
  ),
  bad(
    [...SIM, '--arg', 'out=zeros:4', '--arg', 'n=f32:1.5'],
    2,
    /^forge sim: --arg n: an f32 value for a \.u32 parameter would be converted; give an integer kind/,
  ),
  bad(
    [...SIM, '--arg', '__proto__=u32:1'],
    2,
    /^forge sim: unknown parameter '__proto__' \(parameters: out, n\)$/,
  ),
  bad(
    [...SIM, ...SIM_OK_ARGS, '--dump', 'out=/nonexistent/d'],
    2,
    /^forge sim: --dump out: cannot write \/nonexistent\/d/,
  ),
  bad(
    [...SIM, ...SIM_OK_ARGS, '--dump', 'out=adir'],
    2,
    /^forge sim: --dump out: cannot write adir: it is a directory$/,
  ),
  bad(
    ['sim', '/dev/zero', '--grid', '1', '--block', '1'],
    2,
    /^forge sim: \/dev\/zero is not a regular file \(a character device\)$/,
  ),
  bad(
    ['sim', 'fifo', '--grid', '1', '--block', '1'],
    2,
    /^forge sim: fifo is not a regular file \(a FIFO\)$/,
  ),
  bad(
    [...SIM, '--arg', 'out=@/dev/zero'],
    2,
    /^forge sim: --arg out: \/dev\/zero is not a regular file \(a character device\)$/,
  ),
  bad(
    [...SIM, ...SIM_OK_ARGS, '--dump', 'out=fifo'],
    2,
    /^forge sim: --dump out: fifo is not a regular file \(a FIFO\); forge writes only regular files$/,
  ),
  bad(
    ['sim', 'loop.ptx', '--grid', '99999999999', '--block', '32'],
    2,
    /^forge sim: --grid x: '99999999999' is not an integer in \[1, 2147483647\]$/,
  ),
  bad(
    ['sim', 'loop.ptx', '--grid', '1', '--block', '64,64'],
    2,
    /^forge sim: --block: 64×64×1 is 4096 threads, over 1024$/,
  ),
  bad(
    [...SIM, ...SIM_OK_ARGS, '--max-steps', '0'],
    2,
    /^forge sim: --max-steps: '0' is not an integer in \[1, 1000000000000\]$/,
  ),
  bad(
    [...SIM, ...SIM_OK_ARGS, '--max-steps', '1e6'],
    2,
    /^forge sim: --max-steps: '1e6' is not an integer/,
  ),
  bad(
    [...SIM, ...SIM_OK_ARGS, '--max-steps', '100000', '--dump', 'out=d.bin'],
    1,
    /^forge sim: stopped after 100000 steps \(--max-steps 100000\); the kernel did not finish, an endless loop\? \(last instruction at line \d+\)$/,
  ),
  // golden
  bad(
    ['golden', 'update', '--dir', 'afile'],
    2,
    /^forge golden: --dir: .*afile is not a directory$/,
  ),
  bad(
    ['golden', 'check', '--dir', 'afile'],
    2,
    /^forge golden: --dir: .*afile is not a directory$/,
  ),
  bad(
    ['golden', 'update', '--dir', '/proc/x'],
    2,
    /^forge golden: --dir: cannot create \/proc\/\.x\.staging-\d+: ENOENT$/,
  ),
  bad(
    ['golden', 'update', '--dir', 'somedir'],
    2,
    /^forge golden: --dir: .*somedir is not empty and holds no manifest\.json, so it is not a golden directory; forge golden update replaces a golden directory or fills an empty or new one$/,
  ),
  bad(['golden', 'frobnicate'], 2, /^forge golden: expected 'check' or 'update'/),
  // validate
  bad(['validate', '--target', 'metal'], 2, /^forge validate: --target: unknown target 'metal'/),
  bad(['validate', 'missing.ptx'], 2, /^forge validate: cannot read missing\.ptx: ENOENT$/),
  bad(
    ['validate', '--target', 'wgsl', 'missing.wgsl'],
    2,
    /^forge validate: cannot read missing\.wgsl: ENOENT$/,
  ),
  bad(['validate', 'fifo'], 2, /^forge validate: fifo is not a regular file \(a FIFO\)$/),
  bad(
    ['validate', '--target', 'wgsl', 'broken.wgsl'],
    1,
    null,
    /broken\.wgsl:3:11: error: unresolved value 'missing'/,
  ),
  // the rest
  bad(['hash', 'inject.json'], 2, /^forge hash: invalid input: buffers\[0\]\.name/),
  bad(['spec', 'nope'], 2, /^forge spec: unknown kernel 'nope'/),
  bad(['list', 'extra'], 2, /^forge list: unexpected argument 'extra'/),
  bad(['frobnicate'], 2, /^forge: unknown command 'frobnicate'/),
  bad([`${ESC}]0;pwned${ESC}\\`], 2, /^forge: unknown command '\\u001b\]0;pwned\\u001b\\'/),
  bad(['--version', 'now'], 2, /^forge: unexpected argument 'now' after --version$/),
];

/** Every file under `directory`, relative, sorted. */
export function listing(directory) {
  return readdirSync(directory, { recursive: true }).map(String).sort();
}

/** The command line as a shell would show it, control characters escaped. */
export function shown(args) {
  return ['forge', ...args]
    .map((arg) => JSON.stringify(arg).slice(1, -1))
    .map((arg) => (/^[\w./=:,@-]+$/.test(arg) ? arg : `'${arg}'`))
    .join(' ');
}

/**
 * Whether a case runs the built binary rather than `runCli` in this process: the first case of
 * each command (the binary's own path: stream writes, exit code) and every case that opens Dawn
 * (only the binary filters Dawn's native log off stderr).
 */
export function spawned(testCase) {
  const [command] = testCase.args;
  const first = CASES.find((other) => other.args[0] === command);
  const dawn = ['run', 'validate'].includes(command ?? '') && testCase.args.includes('wgsl');
  return first === testCase || dawn;
}

/** Runs one case in `work` through `runCli` in this process; resolves to what runCase returns. */
export async function runCaseInProcess(testCase, work) {
  const before = new Set(listing(work));
  let stdout = '';
  let stderr = '';
  const code = await runCli(testCase.args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd: work,
  });
  return { code, stdout, stderr, created: listing(work).filter((path) => !before.has(path)) };
}

/** Runs one case in `work` with the built binary; returns what it did and the files it created there. */
export function runCase(testCase, work) {
  const before = new Set(listing(work));
  const run = spawnSync(process.execPath, [FORGE_BIN, ...testCase.args], {
    cwd: work,
    encoding: 'utf8',
  });
  return {
    code: run.status,
    stdout: run.stdout,
    stderr: run.stderr,
    created: listing(work).filter((path) => !before.has(path)),
  };
}
