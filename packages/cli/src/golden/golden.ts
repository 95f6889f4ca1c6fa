import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { blake3Hex, isRecord, type GeneratedShader } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import type { PtxTarget } from '@forge/ptx';
import type { WgslTarget } from '@forge/wgsl';
import { emitFor } from '../emitters.js';
import { InputError } from '../errors.js';
import { readInputText } from '../input-file.js';
import { CLI_LIMITS, formatBytes } from '../limits.js';
import { goldenEntries, goldenFileName, type GoldenEntrySpec } from './entries.js';
import {
  checkGoldenDirectoryPath,
  recoverGoldenDirectory,
  replaceGoldenDirectory,
} from './swap.js';
import { unifiedDiff } from './unified-diff.js';

/** A row of golden/manifest.json. */
export interface ManifestEntry {
  readonly file: string;
  readonly kernelId: string;
  readonly semanticVersion: number;
  readonly target: PtxTarget | WgslTarget;
  readonly schedule: GeneratedShader['schedule'];
  readonly semanticHash: string;
  readonly sourceHash: string;
}

/**
 * The contents of golden/manifest.json (format 1): one row per pinned file with the hashes it was
 * pinned at.
 */
export interface Manifest {
  readonly format: 1;
  readonly entries: readonly ManifestEntry[];
}

export const MANIFEST_FILE = 'manifest.json';

/** Emits one golden entry as it would be pinned. */
export function emitEntry(entry: GoldenEntrySpec): { shader: GeneratedShader; row: ManifestEntry } {
  const kernel = getKernel(entry.kernelId);
  const shader = emitFor(kernel.spec, entry.schedule, entry.target);
  const row: ManifestEntry = {
    file: goldenFileName(entry),
    kernelId: shader.kernelId,
    semanticVersion: kernel.spec.semanticVersion,
    target: shader.target,
    schedule: shader.schedule,
    semanticHash: shader.semanticHash,
    sourceHash: shader.sourceHash,
  };
  return { shader, row };
}

export function formatManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Reads the manifest; undefined when it is missing or not a manifest. */
export function readManifest(directory: string): Manifest | undefined {
  try {
    const value: unknown = JSON.parse(readGoldenFile(directory, MANIFEST_FILE) ?? '');
    if (isRecord(value) && value['format'] === 1 && Array.isArray(value['entries']))
      return value as unknown as Manifest;
  } catch {
    return undefined;
  }
  return undefined;
}

/** One way a golden file disagrees with what the backends emit now. */
export interface GoldenProblem {
  readonly file: string;
  readonly message: string;
  /** Unified diff of pinned vs emitted bytes, when both exist. */
  readonly diff?: string;
}

/** Re-emits every entry and compares bytes and hashes with the pinned files; returns every problem. */
export function checkGolden(
  directory: string,
  entries: readonly GoldenEntrySpec[] = goldenEntries(),
): { checked: number; problems: GoldenProblem[] } {
  checkGoldenDirectoryPath(directory);
  // Finishes a swap a killed update committed to; leftovers beside the directory are not read.
  recoverGoldenDirectory(directory, false);
  const problems: GoldenProblem[] = [];
  const manifest = readManifest(directory);
  if (manifest === undefined) {
    return {
      checked: 0,
      problems: [
        { file: MANIFEST_FILE, message: 'missing or malformed; run `pnpm forge golden update`' },
      ],
    };
  }
  const pinned = new Map(manifest.entries.map((row) => [row.file, row]));
  const expectedFiles = new Set<string>();
  for (const entry of entries) {
    const { shader, row } = emitEntry(entry);
    expectedFiles.add(row.file);
    const pinnedRow = pinned.get(row.file);
    const path = join(directory, row.file);
    if (pinnedRow === undefined || !existsSync(path)) {
      problems.push({ file: row.file, message: 'not pinned; run `pnpm forge golden update`' });
      continue;
    }
    const bytes = readGoldenFile(directory, row.file) ?? '';
    const fileHash = blake3Hex(bytes);
    if (bytes !== shader.source) {
      problems.push({
        file: row.file,
        message: `bytes differ: pinned sourceHash ${pinnedRow.sourceHash}, file ${fileHash}, emitted ${shader.sourceHash}`,
        diff: unifiedDiff(
          bytes,
          shader.source,
          `golden/${row.file} (pinned)`,
          `golden/${row.file} (emitted)`,
        ),
      });
    } else if (fileHash !== pinnedRow.sourceHash) {
      problems.push({
        file: row.file,
        message: `manifest sourceHash ${pinnedRow.sourceHash} does not match the file's ${fileHash}`,
      });
    }
    if (pinnedRow.semanticHash !== row.semanticHash) {
      problems.push({
        file: row.file,
        message: `semantic hash changed: pinned ${pinnedRow.semanticHash}, emitted ${row.semanticHash}`,
      });
    }
  }
  for (const file of pinned.keys()) {
    if (!expectedFiles.has(file))
      problems.push({ file, message: 'stale manifest entry: no golden entry produces it' });
  }
  for (const file of listFiles(directory)) {
    if (file !== MANIFEST_FILE && !pinned.has(file))
      problems.push({ file, message: 'file is not in the manifest' });
  }
  return { checked: entries.length, problems };
}

/**
 * Re-emits every entry and, when any byte differs, replaces the directory as a whole (swap.ts): a
 * kill at any moment leaves the complete old tree or the complete new one. Unchanged files keep
 * their inode and mtime.
 */
export function updateGolden(
  directory: string,
  entries: readonly GoldenEntrySpec[] = goldenEntries(),
): { written: string[]; removed: string[]; unchanged: number } {
  checkGoldenDirectoryPath(directory);
  recoverGoldenDirectory(directory, true);
  // The update replaces the whole directory: one holding anything but a golden tree is not its to take.
  if (
    existsSync(directory) &&
    readdirSync(directory).length > 0 &&
    !existsSync(join(directory, MANIFEST_FILE))
  )
    throw new InputError(
      `--dir: ${directory} is not empty and holds no ${MANIFEST_FILE}, so it is not a golden directory; forge golden update replaces a golden directory or fills an empty or new one`,
    );
  const emitted = entries.map(emitEntry);
  const files = new Map(emitted.map(({ shader, row }) => [row.file, shader.source]));
  files.set(MANIFEST_FILE, formatManifest({ format: 1, entries: emitted.map(({ row }) => row) }));
  const written = [...files]
    .filter(([file, text]) => readGoldenFile(directory, file) !== text)
    .map(([file]) => file);
  const removed = listFiles(directory).filter((file) => !files.has(file));
  if (written.length > 0 || removed.length > 0) {
    const unchanged = new Set([...files.keys()].filter((file) => !written.includes(file)));
    replaceGoldenDirectory(directory, files, unchanged);
  }
  return {
    written,
    removed,
    unchanged: emitted.length - written.filter((file) => file !== MANIFEST_FILE).length,
  };
}

/**
 * A golden file's text, or undefined when there is none; anything else there (a FIFO, a device, a
 * file over CLI_LIMITS.goldenFileBytes) is an InputError naming it, and is neither read nor replaced.
 */
function readGoldenFile(directory: string, file: string): string | undefined {
  if (!existsSync(join(directory, file))) return undefined;
  return readInputText('--dir', file, directory, {
    maxBytes: CLI_LIMITS.goldenFileBytes,
    rule: `a golden file may have at most ${formatBytes(CLI_LIMITS.goldenFileBytes)}`,
    name: `golden/${file}`,
  });
}

function listFiles(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}
