// `pnpm bench --sass` (or `node tools/bench-sass.mjs`): what ptxas makes of each golden PTX kernel.
// Every sm_80 golden PTX file in golden/manifest.json (schedule variants included) is assembled for
// sm_80 and for sm_90 (ptxas accepts a lower .target), with `ptxas -v -lineinfo`, and disassembled
// with `nvdisasm -c -hex -gp`. Per entry (each entry of a multi-entry module separately) it prints
// ptxas's registers, the SASS instruction count, the steady loop (see findSteadyLoop), that loop's
// SASS instructions, LDGs, bytes loaded by them, issue cycles (the stall counts of its control
// bits added up), and its global-load waits per iteration (see globalLoadWaits). `--ggml DIR` (or
// FORGE_GGML_PTX=DIR) adds the same table for every *.ptx file in DIR, when DIR exists.
// `node tools/bench-sass.mjs --show FILE.ptx [--arch sm_90]` prints each entry's steady loop, its
// control bits decoded and its global-load waits marked, to check a figure by eye.
//
// Needs ptxas (`PTXAS`, else on the PATH) and nvdisasm (`NVDISASM`, else on the PATH, else where
// tools/setup-sass.sh puts it); nvdisasm 12.5 reads ptxas 13's sm_80 and sm_90 cubins.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { mapLimit } from './map-limit.mjs';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ARCHS = ['sm_80', 'sm_90'];
/** Where tools/setup-sass.sh installs nvdisasm when /usr/local/bin is not on the PATH. */
const SETUP_NVDISASM = '/opt/forge-sass/bin/nvdisasm';

/** A setup problem: printed as one line, without a stack. */
class SetupError extends Error {}

/**
 * Volta-and-later control bits, bits 105..125 of the 128-bit instruction, i.e. bits 41..61 of the
 * second 64-bit word nvdisasm -hex prints: stall cycles (4 bits), yield, the scoreboard (barrier)
 * the instruction's result sets when it completes (write barrier; 7 = none), the one set when its
 * sources have been read (read barrier; 7 = none), the mask of scoreboards it waits on before
 * issuing, and the operand-reuse flags.
 */
export function decodeControl(high) {
  const bits = (shift, width) => Number((high >> BigInt(shift)) & ((1n << BigInt(width)) - 1n));
  return {
    stall: bits(41, 4),
    yield: bits(45, 1),
    writeBarrier: bits(46, 3),
    readBarrier: bits(49, 3),
    waitMask: bits(52, 6),
    reuse: bits(58, 4),
  };
}

const INSTRUCTION = /^\s*\/\*([0-9a-f]{4,})\*\/\s+(.*?)\s*;\s*\/\*\s*0x([0-9a-f]{16})\s*\*\/\s*$/;
const HIGH_WORD = /^\s*\/\*\s*0x([0-9a-f]{16})\s*\*\/\s*$/;
const SECTION = /^\/\/-+ \.text\.(\S+)\s+-+$/;
const LABEL = /^(\.L_x_\d+):/;
const PTX_LINE = /^\s*\/\/## File "[^"]*", line (\d+)/;

/**
 * Parses `nvdisasm -c -hex [-gp]` output into functions (one per .text section, by name), each a
 * list of instructions: address, text, operation (the text without its guard), opcode (mnemonic
 * with its modifiers), the control bits, the PTX line (with -gp) and, for branches, the target label's address.
 */
export function parseDisassembly(text) {
  const functions = [];
  let current;
  let pendingLabels = [];
  let ptxLine;
  let labels = new Map();
  const finish = () => {
    if (current === undefined) return;
    for (const instruction of current.instructions) {
      const target = /`\((\.L_x_\d+)\)/.exec(instruction.text)?.[1];
      if (target !== undefined) instruction.target = labels.get(target);
    }
    functions.push(current);
  };
  for (const line of text.split('\n')) {
    const section = SECTION.exec(line);
    if (section !== null) {
      finish();
      current = { name: section[1], instructions: [] };
      labels = new Map();
      ptxLine = undefined;
      continue;
    }
    if (current === undefined) continue;
    const source = PTX_LINE.exec(line);
    if (source !== null) {
      ptxLine = Number(source[1]);
      continue;
    }
    const label = LABEL.exec(line);
    if (label !== null) {
      // A label names the next instruction's address.
      pendingLabels.push(label[1]);
      continue;
    }
    const instruction = INSTRUCTION.exec(line);
    if (instruction !== null) {
      const address = parseInt(instruction[1], 16);
      for (const name of pendingLabels) labels.set(name, address);
      pendingLabels = [];
      const operation = instruction[2].replace(/^@!?U?P\w+\s+/, '');
      current.instructions.push({
        address,
        text: instruction[2],
        operation,
        opcode: operation.split(/\s+/)[0],
        ptxLine,
      });
      continue;
    }
    const high = HIGH_WORD.exec(line);
    const last = current.instructions.at(-1);
    if (high !== null && last !== undefined && last.control === undefined) {
      last.control = decodeControl(BigInt(`0x${high[1]}`));
    }
  }
  finish();
  for (const fn of functions) fn.instructions = trimPadding(fn.instructions);
  return functions;
}

/** Drops the alignment tail ptxas appends after the last EXIT: a branch to itself, then NOPs. */
function trimPadding(instructions) {
  let end = instructions.length;
  while (end > 0 && instructions[end - 1].opcode === 'NOP') end--;
  const last = instructions[end - 1];
  if (last?.opcode.startsWith('BRA') && last.target === last.address) end--;
  return instructions.slice(0, end);
}

const isGlobalLoad = (instruction) => /^LDG(\.|$)/.test(instruction.opcode);

/** Bytes one LDG moves per thread, from its width modifier (.U8/.S8 1, .U16/.S16 2, none 4...). */
export function loadBytes(instruction) {
  const modifiers = instruction.opcode.split('.');
  if (modifiers.includes('128')) return 16;
  if (modifiers.includes('64')) return 8;
  if (modifiers.some((m) => m === 'U16' || m === 'S16')) return 2;
  if (modifiers.some((m) => m === 'U8' || m === 'S8')) return 1;
  return 4;
}

/**
 * The loops of a function: each backward branch (a BRA whose target lies at or before it, a branch
 * to itself excepted) closes the loop [target, branch]; several back edges to one target make one
 * loop, up to the farthest of them.
 */
export function findLoops(instructions) {
  const ends = new Map();
  for (const instruction of instructions) {
    const { target, address } = instruction;
    if (!instruction.opcode.startsWith('BRA') || target === undefined || target >= address)
      continue;
    ends.set(target, Math.max(ends.get(target) ?? 0, address));
  }
  return [...ends].map(([start, end]) => {
    const body = instructions.filter((i) => i.address >= start && i.address <= end);
    const loads = body.filter(isGlobalLoad);
    return {
      start,
      end,
      body,
      loads: loads.length,
      loadBytes: loads.reduce((sum, load) => sum + loadBytes(load), 0),
    };
  });
}

const contains = (outer, inner) =>
  outer !== inner && outer.start <= inner.start && inner.end <= outer.end;

/**
 * The steady loop: the innermost loop that streams global memory, taken to be the one that
 * dominates the kernel's dynamic instruction count. Trip counts are unknown statically, so the
 * heuristic is: among loops that contain an LDG but no nested loop containing an LDG (the innermost
 * load loops), the most deeply nested (a loop inside more loops runs more often: a gemv's step loop
 * inside its row and tile loops beats the tile's x-quantizing loop), then the one whose LDGs load
 * the most bytes per thread per iteration, then more LDGs, then more instructions. An unrolled main loop beats its remainder loop (it loads the unroll
 * factor's multiple), and a streaming loop beats an outer loop that only sets it up. A kernel whose
 * loops load nothing gets its largest innermost loop; one without loops, the whole function
 * (`loop` undefined: the straight-line body is one iteration).
 */
export function findSteadyLoop(instructions) {
  const loops = findLoops(instructions);
  const innermost = (candidates) =>
    candidates.filter((loop) => !candidates.some((other) => contains(loop, other)));
  const loading = innermost(loops.filter((loop) => loop.loads > 0));
  const pool = loading.length > 0 ? loading : innermost(loops);
  if (pool.length === 0) return undefined;
  const depth = (loop) => loops.filter((other) => contains(other, loop)).length;
  const rank = (loop) => [depth(loop), loop.loadBytes, loop.loads, loop.body.length];
  const better = (a, b) => {
    const difference = rank(a)
      .map((value, index) => value - rank(b)[index])
      .find((value) => value !== 0);
    return (difference ?? 0) > 0;
  };
  return pool.reduce((best, loop) => (better(loop, best) ? loop : best));
}

/**
 * The global-load waits of one iteration of `body`. An LDG names a scoreboard in its write-barrier
 * field; a later instruction whose wait mask holds that scoreboard (or a `DEPBAR.LE SBn, k` on it)
 * cannot issue until the load's data is back: a wait point. The body is scanned twice in order
 * (forward branches inside it are ignored: every instruction is taken as executed), so a load
 * issued late in one iteration and consumed early in the next counts too; the second pass counts.
 * A scoreboard waited on in full is clear again (DEPBAR.LE SBn, k clears all but its k newest
 * producers); one shared with other variable-latency producers (LDS, S2R, MUFU, ...) counts only
 * while an LDG is among its pending producers. Read barriers (an instruction's sources read) are not
 * load results and never count.
 *
 * Returns `waits`, every such instruction, and `rounds`, those that wait on an LDG issued after the
 * previous round's wait: the memory round trips an iteration exposes in sequence. Four loads issued
 * together and summed one by one are 3 or 4 waits when ptxas gives them separate scoreboards, but
 * one round; a gather (an index loaded, then the value at it) is two rounds.
 */
export function globalLoadWaits(body) {
  const pending = Array.from({ length: 6 }, () => []);
  let waits = [];
  let rounds = [];
  let lastRound = -1;
  for (let pass = 0; pass < 2; pass++) {
    waits = [];
    rounds = [];
    body.forEach((instruction, index) => {
      const control = instruction.control;
      if (control === undefined) return;
      const sequence = pass * body.length + index;
      // The LDGs (their issue positions) this instruction waits for.
      const waitedLoads = [];
      const complete = (barrier, keep) => {
        const done = pending[barrier].splice(0, Math.max(0, pending[barrier].length - keep));
        waitedLoads.push(...done.filter((producer) => producer.load).map((p) => p.sequence));
      };
      for (let barrier = 0; barrier < 6; barrier++)
        if ((control.waitMask & (1 << barrier)) !== 0) complete(barrier, 0);
      // DEPBAR.LE SBn, k[, {i,j,...}]: SBn down to k outstanding, the listed scoreboards to none.
      const depbar = /^DEPBAR(?:\.LE)?\s+SB(\d),\s*(0x[0-9a-f]+|\d+)(?:,\s*\{([\d,\s]*)\})?/.exec(instruction.operation); // prettier-ignore
      if (depbar !== null) {
        complete(Number(depbar[1]), Number(depbar[2]));
        for (const listed of (depbar[3] ?? '').split(',').filter((item) => item.trim() !== ''))
          complete(Number(listed), 0);
      }
      if (waitedLoads.length > 0) {
        waits.push(instruction);
        if (Math.max(...waitedLoads) > lastRound) {
          rounds.push(instruction);
          lastRound = sequence;
        }
      }
      if (control.writeBarrier < 6)
        pending[control.writeBarrier].push({ load: isGlobalLoad(instruction), sequence });
    });
  }
  return { waits, rounds };
}

const counts = ({ waits, rounds }) => ({ waits: waits.length, rounds: rounds.length });

/** One function's figures: SASS count, steady loop, its LDGs, bytes, issue cycles and waits. */
export function analyzeFunction(fn) {
  const loop = findSteadyLoop(fn.instructions);
  const body = loop?.body ?? fn.instructions;
  const loads = body.filter(isGlobalLoad);
  const lines = body.map((i) => i.ptxLine).filter((line) => line !== undefined);
  return {
    name: fn.name,
    sass: fn.instructions.length,
    loop: loop === undefined ? undefined : { start: loop.start, end: loop.end },
    ptxLines: lines.length > 0 ? [Math.min(...lines), Math.max(...lines)] : undefined,
    loopSass: body.length,
    loads: loads.length,
    loadBytes: loads.reduce((sum, load) => sum + loadBytes(load), 0),
    issueCycles: body.reduce((sum, i) => sum + (i.control?.stall ?? 0), 0),
    ...counts(globalLoadWaits(body)),
  };
}

/** Registers per entry from `ptxas -v` output (one `Compiling entry function` block each). */
export function ptxasRegisters(output) {
  const registers = new Map();
  for (const part of output.split(/Compiling entry function '/).slice(1)) {
    const name = /^([^']+)'/.exec(part)?.[1];
    const used = /Used (\d+) registers/.exec(part)?.[1];
    if (name !== undefined) registers.set(name, used === undefined ? NaN : Number(used));
  }
  return registers;
}

const onPath = (binary) =>
  (process.env.PATH ?? '')
    .split(':')
    .some((directory) => directory !== '' && existsSync(join(directory, binary)));

/** The nvdisasm binary: NVDISASM, else on the PATH, else where tools/setup-sass.sh puts it. */
export function nvdisasmBinary() {
  if (process.env.NVDISASM) return process.env.NVDISASM;
  if (onPath('nvdisasm')) return 'nvdisasm';
  if (existsSync(SETUP_NVDISASM)) return SETUP_NVDISASM;
  throw new SetupError(
    'bench --sass: nvdisasm not found (set NVDISASM, or install it with `sudo bash tools/setup-sass.sh`)',
  );
}

const ptxasBinary = () => process.env.PTXAS ?? 'ptxas';

/** Assembles one PTX file for `arch` and analyzes every entry. */
export async function analyzePtxFile(file, arch, nvdisasm = nvdisasmBinary()) {
  const directory = mkdtempSync(join(tmpdir(), 'forge-sass-'));
  try {
    const cubin = join(directory, 'kernel.cubin');
    let assembled;
    try {
      assembled = await run(ptxasBinary(), ['-v', '-lineinfo', `-arch=${arch}`, file, '-o', cubin]);
    } catch (error) {
      if (error.code === 'ENOENT')
        throw new SetupError(
          'bench --sass: ptxas not found (install the CUDA toolkit, or set PTXAS to the ptxas binary)',
        );
      const message = `${error.stderr ?? ''}${error.stdout ?? ''}`.trim().split('\n')[0];
      return { error: `ptxas failed: ${message || error.message}` };
    }
    const registers = ptxasRegisters(`${assembled.stdout}${assembled.stderr}`);
    let disassembly;
    try {
      disassembly = await run(nvdisasm, ['-c', '-hex', '-gp', cubin], {
        maxBuffer: 256 * 1024 * 1024,
      });
    } catch (error) {
      const message = `${error.stderr ?? ''}`.trim().split('\n')[0];
      return { error: `nvdisasm failed: ${message || error.message}` };
    }
    const functions = parseDisassembly(disassembly.stdout).filter((fn) => registers.has(fn.name));
    return {
      entries: functions.map((fn) => ({ ...analyzeFunction(fn), registers: registers.get(fn.name) })), // prettier-ignore
      functions,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The golden PTX files a --sass report covers: the manifest's sm_80 PTX entries. */
export function goldenPtxFiles() {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'golden/manifest.json'), 'utf8'));
  return manifest.entries
    .filter((entry) => entry.target.kind === 'ptx' && entry.target.arch === 'sm_80')
    .map((entry) => join(ROOT, 'golden', entry.file));
}

const hex = (value) => value.toString(16).padStart(4, '0');

/** The table's rows for one arch: one per entry (a multi-entry module's as `file:entry`). */
function tableRows(files, results) {
  const rows = [];
  files.forEach((file, index) => {
    const label = basename(file)
      .replace(/\.ptx$/, '')
      .replace(/\.sm_\d+a?/, '');
    const result = results[index];
    if (result.error !== undefined) {
      rows.push([label, result.error]);
      return;
    }
    for (const entry of result.entries) {
      const name = result.entries.length > 1 ? `${label}:${entry.name}` : label;
      rows.push([
        name,
        String(entry.registers),
        String(entry.sass),
        entry.loop === undefined ? 'none' : `${hex(entry.loop.start)}-${hex(entry.loop.end)}`,
        entry.ptxLines === undefined ? '' : `${entry.ptxLines[0]}-${entry.ptxLines[1]}`,
        String(entry.loopSass),
        String(entry.loads),
        String(entry.loadBytes),
        String(entry.issueCycles),
        String(entry.waits),
        String(entry.rounds),
      ]);
    }
  });
  return rows;
}

const HEADER = ['kernel', 'regs', 'SASS', 'loop', 'PTX lines', 'loop SASS', 'LDG', 'LDG B', 'cycles', 'waits', 'rounds']; // prettier-ignore

function printTable(title, rows) {
  console.log(title);
  const widths = HEADER.map((head, column) =>
    Math.max(head.length, ...rows.filter((row) => row.length > 2).map((row) => row[column].length)),
  );
  const format = (row) =>
    row.length === 2
      ? `  ${row[0].padEnd(widths[0])}  ${row[1]}`
      : `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')}`; // prettier-ignore
  console.log(format(HEADER));
  for (const row of rows) console.log(format(row));
}

const LEGEND = [
  "regs: ptxas -v. SASS: the entry's instructions (alignment padding dropped). loop: the steady loop's",
  "SASS addresses (the deepest innermost loop that loads, then the one loading the most bytes; 'none': no loop, figures for the whole",
  'entry), PTX lines: the PTX lines its instructions come from. Per iteration: loop SASS; LDG and LDG B',
  '(bytes a thread loads); cycles (stall counts added up: issue cycles without waits); waits',
  "(instructions waiting on an LDG's scoreboard); rounds (waits on an LDG issued after the previous",
  "round's wait: dependent memory round trips).",
].join('\n');

/** Prints the report for `files` (absolute paths) on every arch. */
async function report(title, files, nvdisasm) {
  for (const arch of ARCHS) {
    const results = await mapLimit(files, 2, (file) => analyzePtxFile(file, arch, nvdisasm));
    printTable(`${title}, ptxas -arch=${arch}:`, tableRows(files, results));
  }
}

/**
 * `--show FILE [--arch ARCH]`: each entry's steady loop as SASS with its control bits (stall,
 * yield, write and read barrier, wait mask), global-load waits marked `W` and rounds `R`.
 */
async function show(file, arch, nvdisasm) {
  const result = await analyzePtxFile(resolve(file), arch, nvdisasm);
  if (result.error !== undefined) throw new SetupError(`bench --sass --show: ${result.error}`);
  const barrier = (index) => (index === 7 ? '-' : String(index));
  for (const fn of result.functions) {
    const loop = findSteadyLoop(fn.instructions);
    const body = loop?.body ?? fn.instructions;
    const { waits, rounds } = globalLoadWaits(body);
    const range = loop === undefined ? 'no loop: the whole entry' : `loop ${hex(loop.start)}-${hex(loop.end)}`; // prettier-ignore
    console.log(`${fn.name} (${arch}), ${range}: stall yield wr rd wait-mask, W global-load wait, R round`); // prettier-ignore
    for (const instruction of body) {
      const c = instruction.control;
      const mark = `${waits.includes(instruction) ? 'W' : ' '}${rounds.includes(instruction) ? 'R' : ' '}`;
      const bits = `${String(c.stall).padStart(2)} ${c.yield} ${barrier(c.writeBarrier)} ${barrier(c.readBarrier)} ${c.waitMask.toString(2).padStart(6, '0')}`; // prettier-ignore
      console.log(`  ${mark} /*${hex(instruction.address)}*/ ${bits}  ${instruction.text}`);
    }
  }
}

/** `--ggml DIR` or FORGE_GGML_PTX: a directory of reference PTX files, if given and present. */
function ggmlDirectory(argv) {
  const index = argv.indexOf('--ggml');
  const option = argv.find((argument) => argument.startsWith('--ggml='))?.slice('--ggml='.length);
  return (index >= 0 ? argv[index + 1] : option) ?? process.env.FORGE_GGML_PTX;
}

/** The whole --sass report; a missing tool is one line on stderr and exit status 1. */
export async function main(argv = process.argv.slice(2)) {
  try {
    const nvdisasm = nvdisasmBinary();
    const version = await run(nvdisasm, ['--version']).catch(() => undefined);
    const assembler = await run(ptxasBinary(), ['--version']).catch(() => undefined);
    const release = (output) => /release ([\d.]+)/.exec(output?.stdout ?? '')?.[1] ?? '?';
    const option = (name) => argv[argv.indexOf(name) + 1];
    if (argv.includes('--show')) {
      await show(option('--show'), argv.includes('--arch') ? option('--arch') : 'sm_80', nvdisasm);
      return;
    }
    console.log(`SASS of the golden PTX kernels (ptxas ${release(assembler)}, nvdisasm ${release(version)})`); // prettier-ignore
    console.log(LEGEND);
    await report('golden sm_80 PTX', goldenPtxFiles(), nvdisasm);
    const ggml = ggmlDirectory(argv);
    if (ggml !== undefined) {
      const directory = resolve(ggml);
      if (existsSync(directory) && statSync(directory).isDirectory()) {
        const files = readdirSync(directory)
          .filter((name) => name.endsWith('.ptx'))
          .sort()
          .map((name) => join(directory, name));
        if (files.length > 0) await report(`ggml PTX (${directory})`, files, nvdisasm);
        else console.log(`ggml PTX: no .ptx files in ${directory}, skipped`);
      } else console.log(`ggml PTX: ${directory} not found, skipped`);
    }
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  await main();
