/**
 * `@forge/ptx/ptxas`: assembles PTX with NVIDIA's ptxas (the `PTXAS` environment variable, else
 * `ptxas` on the PATH) to prove it valid and read its register, spill and stack report. A separate
 * entry because it spawns a process and needs the CUDA toolkit.
 *
 * @module @forge/ptx/ptxas
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForgeError, InternalError } from '@forge/ir';
import {
  mergePtxModules,
  ptxModuleParts,
  type MergedPtx,
  type PtxModuleParts,
} from './ptx-merge.js';

export {
  mergePtxModules,
  ptxModuleParts,
  type MergedPtx,
  type PtxModuleParts,
} from './ptx-merge.js';

/** ptxas is not on the PATH: a setup problem, reported with how to fix it. */
export class PtxasMissingError extends ForgeError {
  override readonly name = 'PtxasMissingError';
  constructor() {
    super(
      'ptxas was not found on the PATH: install the CUDA toolkit (ptxas ships in cuda-nvcc; CUDA 12.x or 13.x) and put its bin directory on PATH, or set PTXAS to the ptxas binary',
    );
  }
}

/** What ptxas said about one PTX module. */
export interface PtxasResult {
  readonly ok: boolean;
  readonly arch: string;
  /** `Used N registers, ...` as ptxas printed it. */
  readonly resources: string;
  readonly registers: number;
  readonly spillStores: number;
  readonly spillLoads: number;
  readonly stackBytes: number;
  /** ptxas's diagnostics (errors and warnings), empty when clean. */
  readonly diagnostics: string;
  /**
   * A module with several entries (a multi-dispatch kernel): each entry's figures by name, in the
   * module's order; the top-level figures are then the largest over the entries.
   */
  readonly entries?: readonly PtxasEntryReport[];
}

/** ptxas's figures for one entry of a module. */
export interface PtxasEntryReport {
  readonly name: string;
  readonly resources: string;
  readonly registers: number;
  readonly spillStores: number;
  readonly spillLoads: number;
  readonly stackBytes: number;
}

const ptxasBinary = (): string => process.env['PTXAS'] ?? 'ptxas';

/** Assembles `source` with `ptxas -arch=<arch> -v` and parses its resource report. */
export function assemblePtx(source: string, arch: string): PtxasResult {
  const directory = mkdtempSync(join(tmpdir(), 'forge-ptxas-'));
  try {
    const input = join(directory, 'kernel.ptx');
    writeFileSync(input, source);
    const run = spawnSync(ptxasBinary(), ptxasArguments(arch, directory, input), {
      encoding: 'utf8',
    });
    if (run.error !== undefined) throw spawnError(run.error);
    return ptxasReport(`${run.stdout}${run.stderr}`, run.status === 0, arch, source);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * assemblePtx without blocking: ptxas runs as a child process, so several can assemble at once
 * (the schedule sweep runs two at a time).
 */
export async function assemblePtxAsync(source: string, arch: string): Promise<PtxasResult> {
  const directory = await mkdtemp(join(tmpdir(), 'forge-ptxas-'));
  try {
    const input = join(directory, 'kernel.ptx');
    await writeFile(input, source);
    const child = spawn(ptxasBinary(), ptxasArguments(arch, directory, input), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const status = await new Promise<number | null>((resolve, reject) => {
      child.on('error', (error) => reject(spawnError(error)));
      child.on('close', (code) => resolve(code));
    });
    return ptxasReport(output, status === 0, arch, source);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Assembles several modules for `arch`, each module's report as assemblePtxAsync gives it, in
 * fewer ptxas runs: modules with the same header are merged into one (see mergePtxModules) and
 * ptxas's per-entry report split back. When the merged module fails or draws any diagnostic, its
 * modules are assembled one by one, so an error or warning is reported for the module it concerns.
 * A module merging might change (ptxModuleParts) is assembled alone. One ptxas runs at a time.
 */
export async function assemblePtxBatchAsync(
  sources: readonly string[],
  arch: string,
): Promise<PtxasResult[]> {
  const results: (PtxasResult | undefined)[] = sources.map(() => undefined);
  const alone: number[] = [];
  const groups = new Map<string, { index: number; parts: PtxModuleParts }[]>();
  sources.forEach((source, index) => {
    const parts = ptxModuleParts(source);
    if (parts === undefined) alone.push(index);
    else groups.set(parts.header, [...(groups.get(parts.header) ?? []), { index, parts }]);
  });
  for (const group of groups.values()) {
    if (group.length === 1) {
      alone.push(...group.map((member) => member.index));
      continue;
    }
    const merged = mergePtxModules(group.map((member) => member.parts));
    const reports = splitBatchReport(await assemblePtxAsync(merged.source, arch), merged);
    if (reports === undefined) alone.push(...group.map((member) => member.index));
    else group.forEach((member, position) => (results[member.index] = reports[position]));
  }
  for (const index of alone.sort((a, b) => a - b))
    results[index] = await assemblePtxAsync(sources[index] ?? '', arch);
  return results.map((result) => {
    if (result === undefined)
      throw new InternalError('ptx', 'assemblePtxBatchAsync: a module went unassembled');
    return result;
  });
}

/** Each merged module's report, or undefined unless ptxas passed the merge cleanly and named every entry. */
function splitBatchReport(report: PtxasResult, merged: MergedPtx): PtxasResult[] | undefined {
  if (!report.ok || report.diagnostics !== '') return undefined;
  const reports: PtxasResult[] = [];
  for (const names of merged.entries) {
    const entries: PtxasEntryReport[] = [];
    for (const { name, renamed } of names) {
      const entry = report.entries?.find((candidate) => candidate.name === renamed);
      if (entry === undefined || Number.isNaN(entry.registers)) return undefined;
      entries.push({ ...entry, name });
    }
    const [only] = entries;
    if (only === undefined) return undefined;
    const { name: _name, ...figures } = only;
    reports.push({
      ok: true,
      arch: report.arch,
      ...figures,
      diagnostics: '',
      ...(entries.length > 1 ? entriesSummary(entries) : {}),
    });
  }
  return reports;
}

const ptxasArguments = (arch: string, directory: string, input: string): string[] => [
  `-arch=${arch}`,
  '-v',
  input,
  '-o',
  join(directory, 'kernel.cubin'),
];

// A missing binary is a setup problem with a fix to name; anything else is unexpected.
const spawnError = (error: Error): Error =>
  (error as NodeJS.ErrnoException).code === 'ENOENT' ? new PtxasMissingError() : error;

/** One entry's figures from its part of ptxas's `-v` output. */
function entryReport(name: string, output: string): PtxasEntryReport {
  const number = (pattern: RegExp): number => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  return {
    name,
    resources: /(Used \d+ registers[^\n]*)/.exec(output)?.[1] ?? '',
    registers: number(/Used (\d+) registers/),
    spillStores: number(/(\d+) bytes spill stores/),
    spillLoads: number(/(\d+) bytes spill loads/),
    stackBytes: number(/(\d+) bytes stack frame/),
  };
}

/** Parses ptxas's `-v` output (stdout and stderr together). */
function ptxasReport(output: string, ok: boolean, arch: string, source = ''): PtxasResult {
  const number = (pattern: RegExp): number => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  const diagnostics = output
    .split('\n')
    .filter(
      (line) =>
        line.trim() !== '' &&
        !line.startsWith('ptxas info') &&
        !/^\s+\d+ bytes stack frame/.test(line),
    )
    .join('\n');
  return {
    ok,
    arch,
    resources: /(Used \d+ registers[^\n]*)/.exec(output)?.[1] ?? '',
    registers: number(/Used (\d+) registers/),
    spillStores: number(/(\d+) bytes spill stores/),
    spillLoads: number(/(\d+) bytes spill loads/),
    stackBytes: number(/(\d+) bytes stack frame/),
    diagnostics,
    ...multiEntry(output, source),
  };
}

/** Per-entry figures and their maxima, for a module of several entries (ptxas reports each). */
function multiEntry(output: string, source: string): Partial<PtxasResult> {
  // Visible, weak and static (`.entry` alone, as nvcc writes a static __global__) entries alike.
  const names = [...source.matchAll(/^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+([\w$]+)\s*\(/gm)].map(
    (match) => match[1] ?? '',
  );
  if (names.length < 2) return {};
  const parts = output.split(/Compiling entry function '/).slice(1);
  return entriesSummary(
    names.map((name) => entryReport(name, parts.find((part) => part.startsWith(`${name}'`)) ?? '')),
  );
}

/** A module's figures from its entries': the largest of each, with every entry listed. */
function entriesSummary(entries: readonly PtxasEntryReport[]): Partial<PtxasResult> {
  const most = (field: 'registers' | 'spillStores' | 'spillLoads' | 'stackBytes'): number =>
    Math.max(...entries.map((entry) => entry[field]));
  const widest = entries.reduce((best, entry) => (entry.registers > best.registers ? entry : best));
  return {
    resources: widest.resources,
    registers: most('registers'),
    spillStores: most('spillStores'),
    spillLoads: most('spillLoads'),
    stackBytes: most('stackBytes'),
    entries,
  };
}

/** Registers a thread of `entry` uses: its own figure in a module of several, else the module's. */
export function entryRegisters(result: PtxasResult, entry: string): number {
  return result.entries?.find((report) => report.name === entry)?.registers ?? result.registers;
}

/** The arch a PTX module targets, from its `.target` directive. */
export function ptxTargetArch(source: string): string | undefined {
  return /^\s*\.target\s+(sm_\d+a?)/m.exec(source)?.[1];
}
