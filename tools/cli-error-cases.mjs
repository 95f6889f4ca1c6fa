// The CLI's failure paths, one case per bad input (issue #10 items 14-21 and the other commands'
// mistakes): the command line, the exit code and the one stderr line it must give. Shared by
// cli-errors.test.mjs, which asserts them, and cli-error-table.mjs, which prints the table.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Writes the files the cases read into `work`: specs, PTX, WGSL, a directory and a plain file. */
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

/**
 * Each case: `args` (run in the scratch directory), the `exit` code, `stderr` (a pattern the single
 * stderr line must match, or null for no stderr at all) and, where a check's report is expected on
 * stdout, a `stdout` pattern (otherwise stdout must be empty).
 */
export const CASES = [
  // emit
  {
    args: ['emit', 'no-such-kernel'],
    exit: 2,
    stderr: /^forge emit: unknown kernel 'no-such-kernel'/,
  },
  {
    args: ['emit', 'missing.json'],
    exit: 2,
    stderr: /^forge emit: cannot read missing\.json: ENOENT$/,
  },
  { args: ['emit', 'broken.json'], exit: 2, stderr: /^forge emit: broken\.json is not valid JSON/ },
  {
    args: ['emit', 'inject.json'],
    exit: 2,
    stderr: /^forge emit: invalid input: buffers\[0\]\.name: /,
  },
  { args: ['emit', 'rmsnorm', '--arch', 'sm_61'], exit: 2, stderr: /arch: unknown arch 'sm_61'/ },
  {
    args: ['emit', 'rmsnorm', '--target', 'metal'],
    exit: 2,
    stderr: /--target: unknown target 'metal'/,
  },
  { args: ['emit', 'rmsnorm', '--fast'], exit: 2, stderr: /^forge emit: Unknown option '--fast'/ },
  {
    args: ['emit', 'rmsnorm', '--out'],
    exit: 2,
    stderr: /^forge emit: Option '--out <value>' argument missing/,
  },
  {
    args: ['emit', 'rmsnorm', '--schedule', '__proto__=1'],
    exit: 2,
    stderr: /schedule\.__proto__: unknown schedule knob \(known: workgroupSize\)$/,
  },
  {
    args: ['emit', 'rmsnorm', '--schedule', 'constructor=1'],
    exit: 2,
    stderr: /schedule\.constructor: unknown schedule knob/,
  },
  {
    args: ['emit', 'rmsnorm', '--schedule', 'workgroupSize=4096'],
    exit: 2,
    stderr: /schedule\.workgroupSize: 4096 is outside/,
  },
  {
    args: ['emit', 'rmsnorm', '--schedule', 'workgroupSize=99999999999'],
    exit: 2,
    stderr: /schedule: 'workgroupSize=99999999999' is not key=value/,
  },
  {
    args: ['emit', 'rmsnorm', '--out', '/nonexistent/x.ptx'],
    exit: 2,
    stderr:
      /^forge emit: --out: cannot write \/nonexistent\/x\.ptx: directory \/nonexistent does not exist$/,
  },
  {
    args: ['emit', 'rmsnorm', '--out', 'adir'],
    exit: 2,
    stderr: /^forge emit: --out: cannot write adir: it is a directory$/,
  },
  {
    args: ['emit', `${ESC}[31mred.json`],
    exit: 2,
    stderr: /^forge emit: cannot read \\u001b\[31mred\.json: ENOENT$/,
  },
  { args: ['emit', 'a\nb.json'], exit: 2, stderr: /^forge emit: cannot read a\\nb\.json: ENOENT$/ },
  // run
  { args: ['run', 'nope'], exit: 2, stderr: /^forge run: unknown kernel 'nope'/ },
  {
    args: ['run', 'rmsnorm', '--output', 'y=/nonexistent/y'],
    exit: 2,
    stderr:
      /^forge run: --output y: cannot write \/nonexistent\/y: directory \/nonexistent does not exist$/,
  },
  {
    args: ['run', 'rmsnorm', '--output', 'y=out.f32', '--output', 'y=/nonexistent/z'],
    exit: 2,
    stderr: /^forge run: --output: 'y' is given twice$/,
  },
  {
    args: ['run', 'rmsnorm', '--output', 'y=out.f32', '--output', 'x=/nonexistent/z'],
    exit: 2,
    stderr: /^forge run: --output x: cannot write \/nonexistent\/z/,
  },
  {
    args: ['run', 'rmsnorm', '--output', 'y=same.f32', '--output', 'x=./same.f32'],
    exit: 2,
    stderr: /^forge run: --output x: \.\/same\.f32 is already written by --output y$/,
  },
  {
    args: ['run', 'rmsnorm', '--output', '__proto__=p.bin'],
    exit: 2,
    stderr: /^forge run: --output: '__proto__' is not a buffer of rmsnorm/,
  },
  {
    args: ['run', 'rmsnorm', '--input', 'constructor=@x.f32'],
    exit: 2,
    stderr: /^forge run: --input: 'constructor' is not an input buffer of rmsnorm/,
  },
  {
    args: ['run', 'rmsnorm', '--seed', '-1'],
    exit: 2,
    stderr:
      /^forge run: Option '--seed' argument is ambiguous; to specify an option argument starting with a dash use '--seed=-XYZ'; usage: /,
  },
  {
    args: ['run', 'rmsnorm', '--seed=-1'],
    exit: 2,
    stderr: /^forge run: --seed: '-1' is not a non-negative integer$/,
  },
  {
    args: ['run', 'rmsnorm', '--shape', 'n_embd=0'],
    exit: 2,
    stderr: /--shape: n_embd=0 is outside \[1, 268435456\]$/,
  },
  {
    args: ['run', 'rmsnorm', '--target', 'wgsl', '--output', 'y=/nonexistent/y'],
    exit: 2,
    stderr: /^forge run: --output y: cannot write \/nonexistent\/y/,
  },
  {
    args: ['run', 'rmsnorm', '--target', 'wgsl', '--features', 'fp64'],
    exit: 2,
    stderr: /^forge run: .*fp64/,
  },
  {
    args: ['run', 'rmsnorm', '--target', 'metal'],
    exit: 2,
    stderr: /^forge run: --target: 'metal' cannot run kernels/,
  },
  {
    args: ['run', 'affine-f32', '--shape', 'n=268435456'],
    exit: 2,
    stderr:
      /^forge run: --shape: affine-f32 at n=268435456 needs 2147483648 bytes of buffers, over the 1073741824 \(1 GiB\) a run may take$/,
  },
  {
    args: ['run', 'rmsnorm', '--shape', 'n_embd=268435456', '--shape', 'rows=268435456'],
    exit: 2,
    stderr: /^forge run: --shape: rmsnorm at n_embd=268435456 rows=268435456 needs \d+ bytes/,
  },
  // quant
  {
    args: [...QUANT, '--out', '/nonexistent/q'],
    exit: 2,
    stderr: /^forge quant: --out: cannot write \/nonexistent\/q/,
  },
  {
    args: [...QUANT, '--out', 'adir'],
    exit: 2,
    stderr: /^forge quant: --out: cannot write adir: it is a directory$/,
  },
  {
    args: [
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
    exit: 2,
    stderr: /^forge quant: --rows: '0' is not a positive integer$/,
  },
  {
    args: ['quant', 'quantize', '--type', 'q9_9'],
    exit: 2,
    stderr: /^forge quant: --type: unknown type 'q9_9'/,
  },
  // sim
  {
    args: ['sim', 'missing.ptx', '--grid', '1', '--block', '1'],
    exit: 2,
    stderr: /^forge sim: cannot read missing\.ptx: ENOENT$/,
  },
  {
    args: [...SIM, '--arg', 'out=zeros:9999999999'],
    exit: 2,
    stderr: /^forge sim: --arg out: '9999999999' is not a byte count in \[0, 1073741824\]/,
  },
  {
    args: [...SIM, '--arg', 'out=pack:u64:1.5'],
    exit: 2,
    stderr: /^forge sim: --arg out: '1\.5' is not a u64/,
  },
  {
    args: [...SIM, '--arg', 'n=u32:4294967296'],
    exit: 2,
    stderr: /^forge sim: --arg n: '4294967296' is not a u32 \(an integer in \[0, 4294967295\]\)/,
  },
  {
    args: [...SIM, '--arg', 'n=u32:-5'],
    exit: 2,
    stderr: /^forge sim: --arg n: '-5' is not a u32/,
  },
  {
    args: [...SIM, '--arg', 'n=i32:99999999999'],
    exit: 2,
    stderr: /^forge sim: --arg n: '99999999999' is not an i32/,
  },
  {
    args: [...SIM, '--arg', 'n=f32:1e39'],
    exit: 2,
    stderr: /^forge sim: --arg n: '1e39' is not a finite f32 number/,
  },
  {
    args: [...SIM, '--arg', 'n=u64:4294967296', '--arg', 'out=zeros:4'],
    exit: 2,
    stderr: /^forge sim: parameter 'n' is \.u32; 4294967296 does not fit in 32 bits$/,
  },
  {
    args: [...SIM, '--arg', 'out=zeros:4', '--arg', 'n=f32:1.5'],
    exit: 2,
    stderr:
      /^forge sim: --arg n: an f32 value for a \.u32 parameter would be converted; give an integer kind/,
  },
  {
    args: [...SIM, '--arg', '__proto__=u32:1'],
    exit: 2,
    stderr: /^forge sim: unknown parameter '__proto__' \(parameters: out, n\)$/,
  },
  {
    args: [...SIM, ...SIM_OK_ARGS, '--dump', 'out=/nonexistent/d'],
    exit: 2,
    stderr: /^forge sim: --dump out: cannot write \/nonexistent\/d/,
  },
  {
    args: [...SIM, ...SIM_OK_ARGS, '--dump', 'out=adir'],
    exit: 2,
    stderr: /^forge sim: --dump out: cannot write adir: it is a directory$/,
  },
  {
    args: ['sim', 'loop.ptx', '--grid', '99999999999', '--block', '32'],
    exit: 2,
    stderr: /^forge sim: --grid x: '99999999999' is not an integer in \[1, 2147483647\]$/,
  },
  {
    args: ['sim', 'loop.ptx', '--grid', '1', '--block', '64,64'],
    exit: 2,
    stderr: /^forge sim: --block: 64×64×1 is 4096 threads, over 1024$/,
  },
  {
    args: [...SIM, ...SIM_OK_ARGS, '--max-steps', '0'],
    exit: 2,
    stderr: /^forge sim: --max-steps: '0' is not an integer in \[1, 1000000000000\]$/,
  },
  {
    args: [...SIM, ...SIM_OK_ARGS, '--max-steps', '1e6'],
    exit: 2,
    stderr: /^forge sim: --max-steps: '1e6' is not an integer/,
  },
  {
    args: [...SIM, ...SIM_OK_ARGS, '--max-steps', '100000', '--dump', 'out=d.bin'],
    exit: 1,
    stderr:
      /^forge sim: stopped after 100000 steps \(--max-steps 100000\); the kernel did not finish, an endless loop\? \(last instruction at line \d+\)$/,
  },
  // golden
  {
    args: ['golden', 'update', '--dir', 'afile'],
    exit: 2,
    stderr: /^forge golden: --dir: .*afile is not a directory$/,
  },
  {
    args: ['golden', 'check', '--dir', 'afile'],
    exit: 2,
    stderr: /^forge golden: --dir: .*afile is not a directory$/,
  },
  {
    args: ['golden', 'update', '--dir', '/proc/x'],
    exit: 2,
    stderr: /^forge golden: --dir: cannot create \/proc\/\.x\.staging-\d+: ENOENT$/,
  },
  {
    args: ['golden', 'frobnicate'],
    exit: 2,
    stderr: /^forge golden: expected 'check' or 'update'/,
  },
  // validate
  {
    args: ['validate', '--target', 'metal'],
    exit: 2,
    stderr: /^forge validate: --target: unknown target 'metal'/,
  },
  {
    args: ['validate', 'missing.ptx'],
    exit: 2,
    stderr: /^forge validate: cannot read missing\.ptx: ENOENT$/,
  },
  {
    args: ['validate', '--target', 'wgsl', 'missing.wgsl'],
    exit: 2,
    stderr: /^forge validate: cannot read missing\.wgsl: ENOENT$/,
  },
  {
    args: ['validate', '--target', 'wgsl', 'broken.wgsl'],
    exit: 1,
    stderr: null,
    stdout: /broken\.wgsl:3:11: error: unresolved value 'missing'/,
  },
  // the rest
  {
    args: ['hash', 'inject.json'],
    exit: 2,
    stderr: /^forge hash: invalid input: buffers\[0\]\.name/,
  },
  { args: ['spec', 'nope'], exit: 2, stderr: /^forge spec: unknown kernel 'nope'/ },
  { args: ['list', 'extra'], exit: 2, stderr: /^forge list: unexpected argument 'extra'/ },
  { args: ['frobnicate'], exit: 2, stderr: /^forge: unknown command 'frobnicate'/ },
  {
    args: [`${ESC}]0;pwned${ESC}\\`],
    exit: 2,
    stderr: /^forge: unknown command '\\u001b\]0;pwned\\u001b\\'/,
  },
  {
    args: ['--version', 'now'],
    exit: 2,
    stderr: /^forge: unexpected argument 'now' after --version$/,
  },
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

/** Runs one case in `work`; returns what it did and the files it created there. */
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
