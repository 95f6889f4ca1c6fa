// What the simulator accepts, so that any PTX text, however hostile, is refused with one line or
// runs in bounded time and memory. Where ptxas or CUDA has a limit, it is the same number.

/**
 * The simulator's limits. Exceeding one is a PtxSyntaxError (naming the line) or a
 * SimulationInputError (a launch), never a crash; each message names its entry here.
 */
export const SIMULATOR_LIMITS = {
  /**
   * Characters of PTX text parsePtx accepts: 64 MiB. Memory is about 2 bytes a character of text,
   * 250-800 bytes a statement parsed, and 0.6-2.6 KB an instruction of the launched entry compiled
   * (mma the most): nvcc-style modules of many entries take ~7 bytes a character, one long entry
   * ~40, and the limits together keep any module under about 1.3 GiB.
   */
  moduleChars: 64 * 2 ** 20,
  /**
   * Statements in one module: instructions, labels, declarations, parameters and entries (each an
   * object the module keeps): 2^20, about 40 MiB of nvcc's PTX.
   */
  statements: 2 ** 20,
  /** Instructions in one entry: 2^18, more than the largest real kernels hold. */
  entryInstructions: 2 ** 18,
  /**
   * `{` blocks nested inside an entry (and `{` levels of an initializer): 1663, where ptxas 13.0
   * stops ("Parsing error near '{': memory exhausted" at 1664).
   */
  blockDepth: 1663,
  /** `%r<N>` declares at most 2^32 - 1 registers (ptxas: "Constant overflow" at 2^32). */
  registersPerDeclaration: 2 ** 32 - 1,
  /**
   * Register values a block holds: registers the entry uses × 32 × warps in the block (2^24, 285
   * MiB of register state). Only registers an instruction names count, not what `.reg` declares.
   */
  registerValuesPerBlock: 2 ** 24,
  /** Static `.shared` bytes of an entry, its own and the module's it uses: 48 KiB (ptxas). */
  staticSharedBytes: 48 * 1024,
  /** Static plus dynamic shared memory of a block: 227 KiB, sm_90's largest (CUDA). */
  sharedBytesPerBlock: 227 * 1024,
  /** `.local` bytes of an entry, per thread: 512 KiB (CUDA's local memory per thread). */
  localBytesPerThread: 512 * 1024,
  /** Bytes of an entry's parameters: 32764 (ptxas, PTX ISA 8.1 and later; 4352 before). */
  paramBytes: 32764,
  /** `.const` bytes of a module: 64 KiB (ptxas: "too much global constant data"). */
  constBytes: 64 * 1024,
  /** Bytes of a module's `.global` variables together: 1 GiB (ptxas sets none; memory does). */
  globalVariableBytes: 2 ** 30,
  /**
   * `.global` and `.const` variables in a module: 2^14. Each, like each buffer argument, has a 4
   * GiB slot of the simulated address space, and shared memory's generic window starts at 2^48.
   */
  globalVariables: 2 ** 14,
  /**
   * Thread instructions a simulate run executes by default before it stops with StepLimitError;
   * `maxThreadInstructions` raises it (`forge sim --max-steps`, whose own default is 1e8).
   */
  threadInstructions: 2e9,
} as const;

/** The name of one of SIMULATOR_LIMITS, as PtxLimitError's `limit` gives it. */
export type SimulatorLimit = keyof typeof SIMULATOR_LIMITS;

/** `over the simulator's limit of N bytes (SIMULATOR_LIMITS.name)`: how every limit message ends. */
export function overLimit(limit: SimulatorLimit, unit = ''): string {
  return `over the limit of ${SIMULATOR_LIMITS[limit]}${unit} (SIMULATOR_LIMITS.${limit})`;
}
