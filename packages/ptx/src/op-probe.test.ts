import { describe, expect, it } from 'vitest';
import {
  OP_PROBES,
  compareOpProbe,
  describeMismatch,
  interpretOpProbe,
  opProbeInputs,
  opProbeResults,
} from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { simulateShader } from './simulate.js';
import { ptxTarget } from './targets.js';
import { bodyMismatches, distinctBodies } from './arch-bodies.test-support.js';

// Every registry op on every type it takes, on the simulator once per distinct PTX body, against
// the interpreter bit for bit (NaN payloads and the documented approximate ops aside): the
// simulator has no documented differences.
const RUNS = OP_PROBES.flatMap((probe) =>
  distinctBodies((arch) => emitPtx(probe.spec, {}, ptxTarget(arch))).map(
    (group) => [`${probe.name} on ${group.archs.join('+')}`, probe, group] as const,
  ),
);

describe('op probes on the PTX simulator, against the interpreter', () => {
  it.each(RUNS)('%s', (_name, probe, group) => {
    expect(bodyMismatches(group)).toEqual([]);
    const { buffers, params } = opProbeInputs(probe);
    const result = simulateShader(group.shader, buffers, params);
    expect(result.findings).toEqual([]);
    const actual = opProbeResults(probe, buffers);
    const { mismatches } = compareOpProbe(probe, interpretOpProbe(probe), actual);
    expect(mismatches.map(describeMismatch)).toEqual([]);
  });
});
