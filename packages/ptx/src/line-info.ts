import { InternalError, type PrintedDispatch } from '@forge/ir';

/** The `.file` index every `.loc` of an emitted module names: the module has one source file. */
export const PTX_SOURCE_FILE_INDEX = 1;

/**
 * Which printed-IR line the instructions being written belong to, and the `.loc` directive to put
 * before the next one when that line moved since the last directive.
 */
export class LineTracker {
  private nextStatement = 0;
  private wanted: number | undefined;
  private written: number | undefined;

  constructor(private readonly dispatch?: PrintedDispatch) {
    // The prologue (params, buffer and shared addresses) belongs to the dispatch's signature line.
    this.wanted = dispatch?.line;
  }

  /** Moves to the next statement in pre-order; returns its line (undefined without line info). */
  enterStatement(): number | undefined {
    if (this.dispatch === undefined) return undefined;
    const line = this.dispatch.statements[this.nextStatement++];
    if (line === undefined)
      throw new InternalError(
        'ptx',
        'line info: more statements rendered than the printed IR holds',
      );
    this.wanted = line;
    return line;
  }

  /** Returns to `line` (a block statement's own, after its nested statements). */
  resume(line: number | undefined): void {
    if (line !== undefined) this.wanted = line;
  }

  /** The `.loc` to write before the next instruction, when its line differs from the last one. */
  directive(): string | undefined {
    if (this.wanted === undefined || this.wanted === this.written) return undefined;
    this.written = this.wanted;
    return `.loc ${PTX_SOURCE_FILE_INDEX} ${this.wanted} 1`;
  }

  /** Throws unless every statement of the printed dispatch was rendered, so lines cannot drift. */
  finish(): void {
    const expected = this.dispatch?.statements.length ?? 0;
    if (this.dispatch !== undefined && this.nextStatement !== expected)
      throw new InternalError(
        'ptx',
        `line info: ${this.nextStatement} statements rendered, the printed IR holds ${expected}`,
      );
  }
}
