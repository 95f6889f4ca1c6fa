/** A PTX construct the simulator does not implement, or text that is not PTX; names the line. */
export class PtxSyntaxError extends Error {
  override readonly name = 'PtxSyntaxError';
  constructor(
    readonly line: number,
    readonly text: string,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}: ${text}`);
  }
}

/** Bad use of the simulator's API (unknown entry, wrong argument count, bad argument spec). */
export class SimulationInputError extends Error {
  override readonly name = 'SimulationInputError';
}
