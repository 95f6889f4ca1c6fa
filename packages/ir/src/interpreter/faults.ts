import { ExecutionError } from '../errors.js';

// The run-time faults the interpreter reports, shared by the op semantics and the compiled code so
// both raise the same errors.

/** A divisor of an integer division or remainder, which must not be zero. */
export function divisor(b: number, remainder: boolean): number {
  if (b === 0) throw new ExecutionError(`integer ${remainder ? 'remainder' : 'division'} by zero`);
  return b;
}

/** A shift amount, which must be below 32. */
export function shiftAmount(amount: number): number {
  if (amount >= 32) throw new ExecutionError(`shift by ${amount} (must be < 32)`);
  return amount;
}

/** The fault of an access outside a memory's elements. */
export function outOfBounds(name: string, access: string, index: number, length: number): Error {
  return new ExecutionError(
    `out-of-bounds ${access} of '${name}' at element ${index} (length ${length})`,
  );
}

/** The fault of naming a memory that is neither a buffer nor a shared array. */
export function noMemory(name: string): Error {
  return new ExecutionError(`no buffer or shared array named '${name}'`);
}
