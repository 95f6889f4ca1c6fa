// Register slots: only the registers an entry's instructions name get one, however many `.reg`
// declares (`.reg .b32 %r<2000000000>;` is legal PTX, and ptxas assembles it).
import type { PtxType, RegisterDeclaration } from '../ast.js';
import { SimulationInputError } from '../errors.js';
import { SIMULATOR_LIMITS, overLimit } from '../limits.js';
import { trailingDigits } from '../parser/body.js';
import { WARP } from './state.js';

export interface RegisterInfo {
  readonly index: number;
  readonly type: PtxType;
}

/** Most registers one entry may use: a one-warp block's worth of SIMULATOR_LIMITS. */
export const MAX_ENTRY_REGISTERS = SIMULATOR_LIMITS.registerValuesPerBlock / WARP;

/**
 * The registers of one entry by name: `get` gives a declared register its slot the first time an
 * instruction names it, so slots are dense and as many as the registers in use.
 */
export class RegisterTable {
  private readonly scalars = new Map<string, PtxType>();
  private readonly ranges = new Map<string, { readonly type: PtxType; readonly count: number }>();
  private readonly used = new Map<string, RegisterInfo>();

  constructor(
    declarations: readonly RegisterDeclaration[],
    private readonly entry: string,
  ) {
    // A later declaration of a name wins, as a name's slot did when every one was made up front.
    for (const { name, type, count } of declarations) {
      if (count === undefined) this.scalars.set(name, type);
      else this.ranges.set(name, { type, count });
    }
  }

  /** Registers given a slot so far. */
  get size(): number {
    return this.used.size;
  }

  values(): IterableIterator<RegisterInfo> {
    return this.used.values();
  }

  /** The register's slot and type, or undefined when `name` is not declared. */
  get(name: string): RegisterInfo | undefined {
    const known = this.used.get(name);
    if (known !== undefined) return known;
    const type = this.typeOf(name);
    if (type === undefined) return undefined;
    if (this.used.size >= MAX_ENTRY_REGISTERS)
      throw new SimulationInputError(
        `entry '${this.entry}' uses more than ${MAX_ENTRY_REGISTERS} registers, which even a one-warp block cannot hold: ${overLimit('registerValuesPerBlock', ' register values')}`,
      );
    const info = { index: this.used.size, type };
    this.used.set(name, info);
    return info;
  }

  // `%r7` is a member of `%r<N>` when 7 < N, spelled without leading zeros (`%r07` is not);
  // `%r12` may also be `%r1<N>`'s member 2. An index has at most 10 digits (below 2^32).
  private typeOf(name: string): PtxType | undefined {
    const scalar = this.scalars.get(name);
    if (scalar !== undefined) return scalar;
    for (
      let split = Math.max(trailingDigits(name), name.length - 10);
      split < name.length;
      split++
    ) {
      const range = this.ranges.get(name.slice(0, split));
      const index = name.slice(split);
      if (range === undefined || (index.length > 1 && index.startsWith('0'))) continue;
      if (Number(index) < range.count) return range.type;
    }
    return undefined;
  }
}
