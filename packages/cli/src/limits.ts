/**
 * The most bytes `forge` reads from each kind of file a user names. A file is read at most one byte
 * past its limit (so a size over it is told, not read whole), and only a regular file is read at
 * all (input-file.ts). Inputs whose size a shape fixes (`forge run --input`, `forge quant --in`)
 * are read up to that size instead; `forge sim --arg NAME=@FILE` up to what is left of the 1 GiB
 * its buffers may take together (MAX_SIM_BYTES).
 */
export const CLI_LIMITS = {
  /** A KernelSpec JSON file (`forge emit`, `forge hash`): 16 MiB; the largest catalog spec is ~1 MB. */
  specJsonBytes: 16 * 2 ** 20,
  /** A PTX or WGSL source (`forge sim FILE.ptx`, `forge validate FILE`): 64 MiB. */
  sourceBytes: 64 * 2 ** 20,
  /** A file of a golden directory (`forge golden check|update`), manifest included: 64 MiB. */
  goldenFileBytes: 64 * 2 ** 20,
} as const;

/** `16777216 (16 MiB)`: a byte count as written in messages. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes} (${bytes / size} ${unit})`;
  return String(bytes);
}
