import { runCli } from './main.js';

/** What one `forge` command line printed and returned. */
export interface ForgeResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `forge <args>` through `runCli` in this process, in `cwd`: the binary's output and exit
 * code without a node start-up per command. Commands that open Dawn need the binary (only it
 * filters Dawn's native log off stderr); cli.test.ts covers the binary's own path.
 */
export async function forgeInProcess(cwd: string, ...args: string[]): Promise<ForgeResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd,
  });
  return { code, stdout, stderr };
}
