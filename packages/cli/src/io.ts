/** Where a command writes; tests pass collectors, the binary passes process streams. */
export interface CliIo {
  /** Receives text for standard output, newlines included. */
  readonly stdout: (text: string) => void;
  /** Receives text for standard error, newlines included. */
  readonly stderr: (text: string) => void;
  readonly cwd: string;
}
