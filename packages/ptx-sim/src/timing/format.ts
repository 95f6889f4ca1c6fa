import type { Estimate, SequenceEstimate } from './estimate.js';

/** Seconds as µs or ms, three significant digits. */
export function duration(seconds: number): string {
  if (seconds >= 1e-3) return `${(seconds * 1e3).toPrecision(3)} ms`;
  return `${(seconds * 1e6).toPrecision(3)} µs`;
}

const kilobytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * One line, e.g. `estimate H200: 9.12 µs, 83% of DRAM bandwidth, DRAM-bound; 16 warps/SM (2
 * blocks resident, room for 3 by registers), 128 of 132 SMs, 1 wave; DRAM bytes in flight per SM 21.3 KB mean, 32.0 KB
 * peak; 1.0 DRAM round trips a warp; shared wavefronts 4096 (minimum 1024); launch 2.50 µs`.
 */
export function formatEstimate(estimate: Estimate): string {
  const { occupancy: placed } = estimate;
  const sms = `${placed.activeSms} of ${placed.activeSms + placed.idleSms} SMs`;
  const waves = `${placed.waves} wave${placed.waves === 1 ? '' : 's'}`;
  const plural = (count: number, noun: string): string =>
    `${count} ${noun}${count === 1 ? '' : 's'}`;
  const blocks = `${plural(placed.residentBlocks, 'block')} resident, room for ${placed.blocksPerSm} by ${placed.limitedBy}`;
  const shared =
    estimate.sharedWavefronts === 0
      ? ''
      : `; shared wavefronts ${Math.round(estimate.sharedWavefronts)} (minimum ${Math.round(estimate.sharedWavefrontsMinimum)})`;
  return `estimate ${estimate.gpu}: ${duration(estimate.seconds)}, ${(estimate.bandwidthFraction * 100).toFixed(0)}% of DRAM bandwidth, ${estimate.bound}-bound; ${plural(placed.residentWarps, 'warp')}/SM (${blocks}), ${sms}, ${waves}; DRAM bytes in flight per SM ${kilobytes(estimate.bytesInFlightPerSm.mean)} mean, ${kilobytes(estimate.bytesInFlightPerSm.peak)} peak; ${estimate.dramRoundTripsPerWarp.toFixed(1)} DRAM round trips a warp${shared}; launch ${duration(estimate.launchSeconds)}`;
}

/** A chain's line: the kernels' time, each one's and its bound, then with the launch gaps. */
export function formatSequence(sequence: SequenceEstimate): string {
  const parts = sequence.dispatches.map((part) => `${duration(part.seconds)} ${part.bound}-bound`);
  return `estimate ${sequence.gpu}: ${duration(sequence.seconds)} in ${sequence.dispatches.length} kernels (${parts.join(' + ')}), ${(sequence.bandwidthFraction * 100).toFixed(0)}% of DRAM bandwidth, ${sequence.bound}-bound; with ${sequence.graph ? 'graph' : 'stream'} launch gaps ${duration(sequence.totalSeconds)}`;
}
