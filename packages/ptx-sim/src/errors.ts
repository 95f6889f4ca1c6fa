import type { SimulatorLimit } from './limits.js';

/**
 * A PTX construct the simulator does not implement, or text that is not PTX; names the line
 * (line 0: the module as a whole, whose message is the reason alone).
 */
export class PtxSyntaxError extends Error {
  override readonly name: string = 'PtxSyntaxError';
  constructor(
    readonly line: number,
    readonly text: string,
    readonly reason: string,
  ) {
    super(line > 0 ? `line ${line}: ${reason}: ${text}` : reason);
  }
}

/**
 * PTX text past one of SIMULATOR_LIMITS (`limit` names it): refused even by
 * `parsePtx(text, { lazyEntries: true })`, which keeps other problems for the entry's launch.
 */
export class PtxLimitError extends PtxSyntaxError {
  override readonly name = 'PtxLimitError';
  constructor(
    line: number,
    text: string,
    reason: string,
    readonly limit: SimulatorLimit,
  ) {
    super(line, text, reason);
  }
}

/** Bad use of the simulator's API (unknown entry, wrong argument count, bad argument spec). */
export class SimulationInputError extends Error {
  override readonly name = 'SimulationInputError';
}
