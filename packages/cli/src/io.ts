import { renameSync, rmSync, writeFileSync } from 'node:fs';

/** Where a command writes; tests pass collectors, the binary passes process streams. */
export interface CliIo {
  /** Receives text for standard output, newlines included. */
  readonly stdout: (text: string) => void;
  /** Receives text for standard error, newlines included. */
  readonly stderr: (text: string) => void;
  readonly cwd: string;
}

/** Writes via a temporary file and rename, so a crash leaves either the old bytes or the new. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const temporary = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
