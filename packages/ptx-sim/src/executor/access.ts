import type { SourceLocation } from '../ast.js';
import type { Bits } from '../semantics/types.js';
import type { BufferTraffic } from './counters.js';
import { SHARED_WINDOW, isAligned, readBits, writeBits } from './memory.js';
import { report, threadIndex, type ExecutionContext } from './state.js';

export type Space = 'global' | 'shared' | 'local' | 'param' | 'const' | 'generic';

export interface AccessRequest {
  readonly space: Space;
  readonly address: number;
  readonly size: number;
  readonly location: SourceLocation;
  /** Atomics do not take part in race detection. */
  readonly atomic?: boolean;
}

/** Where an access landed; one object, overwritten by every locate (its callers use it at once). */
interface Place {
  view: DataView;
  offset: number;
  buffer: string | undefined;
}
const place: Place = { view: new DataView(new ArrayBuffer(0)), offset: 0, buffer: undefined };

function found(view: DataView, offset: number, buffer?: string): Place {
  place.view = view;
  place.offset = offset;
  place.buffer = buffer;
  return place;
}

function locate(
  context: ExecutionContext,
  lane: number,
  request: AccessRequest,
  write: boolean,
): Place | undefined {
  // Generic addresses resolve to the shared window above SHARED_WINDOW, global below.
  let { space, address } = request;
  if (space === 'generic') {
    if (address >= SHARED_WINDOW) {
      space = 'shared';
      address -= SHARED_WINDOW;
    } else space = 'global';
  }
  const { size, location } = request;
  const verb = write ? 'write' : 'read';
  if (!isAligned(address, size) && context.simulation.sanitize) {
    report(
      context,
      'misaligned',
      `${size}-byte ${space} ${verb} at address 0x${address.toString(16)} is not ${size}-byte aligned`,
      location,
      lane,
    );
    return undefined;
  }
  switch (space) {
    case 'global':
    case 'const': {
      const buffer = context.simulation.global.find(address, size);
      if (buffer === undefined) {
        const nearest = context.simulation.global.nearest(address);
        const where =
          nearest === undefined
            ? 'outside every buffer'
            : `at byte ${address - nearest.base} of '${nearest.name}' (${nearest.bytes.byteLength} bytes)`;
        report(context, 'out-of-bounds', `${size}-byte global ${verb} ${where}`, location, lane);
        return undefined;
      }
      return found(buffer.view, address - buffer.base, buffer.name);
    }
    case 'shared': {
      const { shared } = context.cta;
      if (address < 0 || address + size > shared.bytes.byteLength) {
        report(
          context,
          'out-of-bounds',
          `${size}-byte shared ${verb} at offset ${address} of ${shared.bytes.byteLength} bytes of shared memory`,
          location,
          lane,
        );
        return undefined;
      }
      if (context.simulation.sanitize && request.atomic !== true) {
        const other = shared.track(address, size, threadIndex(context.warp, lane), write);
        if (other !== undefined) {
          report(
            context,
            'shared-race',
            `${verb} of shared bytes [${address}, ${address + size}) races with thread ${other} (no barrier between them)`,
            location,
            lane,
          );
        }
      }
      if (context.simulation.sanitize && shared.copies.size > 0) {
        const copier = shared.copies.writerOf(address, address + size);
        if (copier !== undefined)
          report(
            context,
            'async-copy-race',
            `${verb} of shared bytes [${address}, ${address + size}) that a cp.async of thread ${copier} may still be writing (no cp.async.wait_group covers it${copier === threadIndex(context.warp, lane) ? '' : ', then a barrier'})`,
            location,
            lane,
          );
      }
      context.simulation.trace?.sharedAccess(lane, address, size);
      return found(shared.view, address);
    }
    case 'local': {
      const view = context.warp.local[lane] as DataView;
      if (write) context.warp.localWritten = true;
      context.simulation.trace?.localAccess();
      if (address < 0 || address + size > view.byteLength) {
        report(
          context,
          'out-of-bounds',
          `${size}-byte local ${verb} at offset ${address} of ${view.byteLength} bytes`,
          location,
          lane,
        );
        return undefined;
      }
      return found(view, address);
    }
    case 'param': {
      const { params } = context.simulation;
      if (write || address < 0 || address + size > params.byteLength) {
        report(
          context,
          'out-of-bounds',
          write
            ? 'write to kernel parameter space'
            : `${size}-byte param read at offset ${address} of ${params.byteLength} bytes`,
          location,
          lane,
        );
        return undefined;
      }
      return found(params, address);
    }
    default:
      return undefined;
  }
}

/** Reads `size` bytes for one lane; faults are findings and read as zero. */
export function load(context: ExecutionContext, lane: number, request: AccessRequest): Bits {
  const at = locate(context, lane, request, false);
  if (at === undefined) return request.size === 8 ? 0n : 0;
  if (at.buffer !== undefined) {
    const traffic = context.simulation.counters.buffers[at.buffer];
    if (traffic !== undefined) traffic.bytesRead += request.size;
  }
  return readBits(at.view, at.offset, request.size);
}

export function store(
  context: ExecutionContext,
  lane: number,
  request: AccessRequest,
  value: Bits,
): void {
  const at = locate(context, lane, request, true);
  if (at === undefined) return;
  if (at.buffer !== undefined) {
    const traffic = context.simulation.counters.buffers[at.buffer];
    if (traffic !== undefined) traffic.bytesWritten += request.size;
  }
  writeBits(at.view, at.offset, request.size, value);
}

interface WarpAccess {
  readonly address: number;
  readonly size: number;
}

/** Bytes in the union of the accesses' byte ranges: lanes asking for the same byte count it once. */
function distinctBytes(accesses: readonly WarpAccess[]): number {
  // Ranges in address order that do not overlap (the usual coalesced access) just add up.
  let total = 0;
  let end = -Infinity;
  for (const { address, size } of accesses) {
    if (address < end) return overlappingBytes(accesses);
    total += size;
    end = address + size;
  }
  return total;
}

function overlappingBytes(accesses: readonly WarpAccess[]): number {
  const ranges = accesses
    .map(({ address, size }) => [address, address + size] as const)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let covered = -Infinity;
  for (const [start, end] of ranges) {
    if (end > covered) total += end - Math.max(start, covered);
    covered = Math.max(covered, end);
  }
  return total;
}

/**
 * Distinct 32-byte sectors of one warp-level access, the distinct bytes asked for (so efficiency is
 * the share of fetched sector bytes some lane used, at most 1), and the buffer's counters.
 */
function sectorsOf(
  context: ExecutionContext,
  accesses: readonly WarpAccess[],
): { sectors: Set<number>; requested: number; traffic: BufferTraffic | undefined } {
  const sectors = new Set<number>();
  const requested = distinctBytes(accesses);
  let name: string | undefined;
  for (const { address, size } of accesses) {
    for (
      let sector = Math.floor(address / 32);
      sector <= Math.floor((address + size - 1) / 32);
      sector++
    )
      sectors.add(sector);
    name ??= context.simulation.global.find(address, size)?.name;
  }
  const traffic = name === undefined ? undefined : context.simulation.counters.buffers[name];
  return { sectors, requested, traffic };
}

/**
 * Counts one warp-level global ld/st of a buffer (or a cp.async's reads: `.ca` through L1, `.cg`
 * not): bytes asked for vs distinct 32-byte sectors touched (L1 request level), and each sector's
 * pass through the modeled L2 (DRAM level).
 */
export function countSectors(
  context: ExecutionContext,
  accesses: readonly WarpAccess[],
  kind: 'load' | 'store' | 'copy-ca' | 'copy-cg',
): void {
  const { sectors, requested, traffic } = sectorsOf(context, accesses);
  if (traffic === undefined) return;
  traffic.requestedBytes += requested;
  traffic.sectorBytes += sectors.size * 32;
  const { l2, trace } = context.simulation;
  for (const sector of sectors) {
    const hit = kind === 'store' ? l2.write(sector, traffic) : l2.read(sector, traffic);
    if (kind === 'load' || kind === 'store') trace?.globalSector(sector, hit, kind === 'store');
    else trace?.copySector(sector, hit, kind === 'copy-ca');
  }
}

/** Atomics resolve in L2, not L1: no request counters, but a miss reads DRAM and the sector turns dirty. */
export function countAtomicSectors(
  context: ExecutionContext,
  accesses: readonly WarpAccess[],
): void {
  const { sectors, traffic } = sectorsOf(context, accesses);
  if (traffic === undefined) return;
  const { l2, trace } = context.simulation;
  for (const sector of sectors) {
    // Read before the optional call: `trace?.f(x)` would skip evaluating x without a trace.
    const hit = l2.read(sector, traffic);
    trace?.atomicSector(hit);
    l2.write(sector, traffic);
  }
}
