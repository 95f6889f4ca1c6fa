import type { Bits } from '../semantics/types.js';
import { PendingCopies } from './pending-copies.js';

/** Global buffers live 4 GiB apart, so any stray address falls outside every buffer. */
export const BUFFER_STRIDE = 2 ** 32;
/** Generic addresses of shared memory (after cvta.shared) start here. */
export const SHARED_WINDOW = 2 ** 48;

export interface GlobalBuffer {
  readonly name: string;
  readonly base: number;
  readonly bytes: Uint8Array;
  readonly view: DataView;
}

/**
 * Whether `address % size === 0`. For a power-of-two size the quotient and product are exact, so
 * this avoids the slow floating-point remainder that addresses above 2^31 would take.
 */
export function isAligned(address: number, size: number): boolean {
  return (size & (size - 1)) === 0
    ? address - Math.floor(address / size) * size === 0
    : address % size === 0;
}

/** Reads `size` bytes (1, 2, 4 or 8) little-endian; 8-byte values come back as bigint. */
export function readBits(view: DataView, offset: number, size: number): Bits {
  switch (size) {
    case 1:
      return view.getUint8(offset);
    case 2:
      return view.getUint16(offset, true);
    case 4:
      return view.getUint32(offset, true);
    default:
      return view.getBigUint64(offset, true);
  }
}

export function writeBits(view: DataView, offset: number, size: number, value: Bits): void {
  switch (size) {
    case 1:
      return view.setUint8(offset, Number(value) & 0xff);
    case 2:
      return view.setUint16(offset, Number(value) & 0xffff, true);
    case 4:
      // ToUint32 of an integer is its value mod 2^32, as asUintN gives (without a bigint).
      return view.setUint32(
        offset,
        typeof value === 'number' && Number.isInteger(value)
          ? value >>> 0
          : Number(BigInt.asUintN(32, BigInt(value))),
        true,
      );
    default:
      return view.setBigUint64(offset, BigInt.asUintN(64, BigInt(value)), true);
  }
}

/** The global address space: buffers passed to the kernel, each at its own base. */
export class GlobalMemory {
  readonly buffers: GlobalBuffer[] = [];

  allocate(name: string, bytes: Uint8Array): number {
    const base = (this.buffers.length + 1) * BUFFER_STRIDE;
    this.buffers.push({
      name,
      base,
      bytes,
      view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    });
    return base;
  }

  /** The buffer holding [address, address + size), or undefined (out of bounds). */
  find(address: number, size: number): GlobalBuffer | undefined {
    const buffer = this.buffers[Math.floor(address / BUFFER_STRIDE) - 1];
    if (buffer === undefined) return undefined;
    const offset = address - buffer.base;
    return offset >= 0 && offset + size <= buffer.bytes.byteLength ? buffer : undefined;
  }

  /** The buffer whose 4 GiB slot holds `address` (for naming it in an out-of-bounds finding). */
  nearest(address: number): GlobalBuffer | undefined {
    return this.buffers[Math.floor(address / BUFFER_STRIDE) - 1];
  }
}

/**
 * Shared memory of one CTA with a race shadow: for each byte, the last writer and a reader, each
 * stamped with the CTA barrier epoch and the writer's warp-sync epoch. Two accesses race when they
 * come from different threads in the same barrier epoch, at least one writes, and (for threads of
 * one warp) no bar.warp.sync separates them.
 */
export class SharedMemory {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  private readonly writer: Int32Array;
  private readonly writerEpoch: Int32Array;
  private readonly writerWarpEpoch: Int32Array;
  private readonly reader: Int32Array;
  private readonly readerEpoch: Int32Array;
  private readonly readerWarpEpoch: Int32Array;
  epoch = 0;
  readonly warpEpochs: Int32Array;
  /** cp.async copies into it not yet waited for (sanitizer). */
  readonly copies: PendingCopies;

  constructor(size: number, warps: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
    this.writer = new Int32Array(size).fill(-1);
    this.writerEpoch = new Int32Array(size).fill(-1);
    this.writerWarpEpoch = new Int32Array(size);
    this.reader = new Int32Array(size).fill(-1);
    this.readerEpoch = new Int32Array(size).fill(-1);
    this.readerWarpEpoch = new Int32Array(size);
    this.warpEpochs = new Int32Array(warps);
    this.copies = new PendingCopies(warps * 32);
  }

  /** Back to the state of a new CTA's shared memory (zero bytes, no accesses), for reuse. */
  reset(): void {
    this.bytes.fill(0);
    this.writer.fill(-1);
    this.writerEpoch.fill(-1);
    this.writerWarpEpoch.fill(0);
    this.reader.fill(-1);
    this.readerEpoch.fill(-1);
    this.readerWarpEpoch.fill(0);
    this.warpEpochs.fill(0);
    this.epoch = 0;
    this.copies.reset();
  }

  private ordered(other: number, otherWarpEpoch: number, thread: number): boolean {
    if (other === thread) return true;
    const warp = thread >> 5;
    // Same warp: a bar.warp.sync since the other access orders them.
    return other >= 0 && other >> 5 === warp && this.warpEpochs[warp] !== otherWarpEpoch;
  }

  /** Records an access; returns the conflicting thread when it races, else undefined. */
  track(offset: number, size: number, thread: number, write: boolean): number | undefined {
    let conflict: number | undefined;
    const warpEpoch = this.warpEpochs[thread >> 5] ?? 0;
    for (let byte = offset; byte < offset + size; byte++) {
      const writer = this.writer[byte] as number;
      if (
        this.writerEpoch[byte] === this.epoch &&
        !this.ordered(writer, this.writerWarpEpoch[byte] as number, thread)
      ) {
        conflict ??= writer;
      }
      if (write) {
        const reader = this.reader[byte] as number;
        if (
          this.readerEpoch[byte] === this.epoch &&
          reader !== -1 &&
          (reader === -2 || !this.ordered(reader, this.readerWarpEpoch[byte] as number, thread))
        ) {
          conflict ??= reader === -2 ? (writer >= 0 ? writer : thread) : reader;
        }
        this.writer[byte] = thread;
        this.writerEpoch[byte] = this.epoch;
        this.writerWarpEpoch[byte] = warpEpoch;
      } else if (this.readerEpoch[byte] !== this.epoch || this.reader[byte] === -1) {
        this.reader[byte] = thread;
        this.readerEpoch[byte] = this.epoch;
        this.readerWarpEpoch[byte] = warpEpoch;
      } else if (this.reader[byte] !== thread) {
        // Several readers in one epoch: any later write by another thread races.
        this.reader[byte] = -2;
      }
    }
    return conflict;
  }
}
