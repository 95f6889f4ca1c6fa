import { describe, expect, it } from 'vitest';
import { rejectionKind, runPtxCampaign } from './ptx-campaign.mjs';
import { ptxCase } from './ptx-mutants.mjs';
import { BOUNDS, classify } from './ptx-runner.mjs';

// The bounded PTX fuzz run of `pnpm test`: a fixed seed of mutated PTX through `forge sim`, most
// in this process (runCli), a sample through the real binary under the time and memory bounds.
// `pnpm fuzz --target ptx --minutes N` runs the child-process campaign for longer from any seed.

const SEED = 20261226;

// In a test the time bound only catches hangs: the machine is shared with other suites, so a case
// may take several times what it takes alone. `pnpm fuzz` keeps BOUNDS' 15 s.
const TEST_BOUNDS = { ...BOUNDS, ms: 60_000 };

const failures = (campaign) =>
  campaign.groups.map(
    (group) => `${group.count}× ${group.key} (e.g. case ${group.example.index}: ${group.example.message})`, // prettier-ignore
  );

describe('bounded PTX fuzz campaign', () => {
  it('600 cases in process: every one runs or is refused in one line, none throws', async () => {
    const campaign = await runPtxCampaign({
      seed: SEED,
      numRuns: 600,
      mode: 'in-process',
      bounds: TEST_BOUNDS,
    });
    const { counts } = campaign;
    expect(failures(campaign), `counts ${JSON.stringify(counts)}`).toEqual([]);
    expect(counts.tried).toBe(600);
    // The mutants must keep reaching the executor, not just the parser's refusals.
    expect((counts.ran + counts.findings + counts['step-limit']) / counts.tried).toBeGreaterThan(
      0.25,
    );
    expect(counts.rejected).toBeGreaterThan(100);
    // Issue #26's limits are among the refusals.
    expect([...campaign.info.rejections.keys()]).toContain('limit:blockDepth');
  }, 600_000);

  it('12 cases through the binary: within 60 s and 768 MiB each, no stack trace', async () => {
    const campaign = await runPtxCampaign({
      seed: SEED,
      numRuns: 12,
      mode: 'child',
      jobs: 2,
      bounds: TEST_BOUNDS,
    });
    expect(failures(campaign), `counts ${JSON.stringify(campaign.counts)}`).toEqual([]);
    expect(campaign.counts.tried).toBe(12);
    // The probe reported a peak: a real process, well under the bound.
    expect(campaign.info.peak.bytes).toBeGreaterThan(16 * 2 ** 20);
  }, 600_000);
});

describe('the PTX fuzzer itself', () => {
  it('replays a case from its seed and index', () => {
    expect(ptxCase(SEED, 17)).toEqual(ptxCase(SEED, 17));
    expect(ptxCase(SEED, 17).text).not.toBe(ptxCase(SEED, 18).text);
  });

  it('calls a trace, a crash and a blown bound failures, and a one-line refusal not', () => {
    const one = 'forge sim: line 3: bad\n';
    expect(classify({ code: 2, stderr: one, ms: 5 }).outcome).toBe('rejected');
    expect(classify({ code: 1, stderr: '', ms: 5 }).outcome).toBe('findings');
    expect(classify({ code: 2, stderr: `${one}    at parse (x.js:1:2)\n`, ms: 5 }).outcome).toBe(
      'trace',
    );
    expect(classify({ code: 1, stderr: 'Error: x\n    at y\n', ms: 5 }).outcome).toBe('trace');
    expect(classify({ code: 134, stderr: 'FATAL ERROR: heap\n', ms: 5 }).outcome).toBe('crash');
    expect(classify({ thrown: new RangeError('Map maximum size exceeded'), ms: 5 }).outcome).toBe(
      'crash',
    );
    expect(classify({ code: 2, stderr: one, ms: 60_000 }).outcome).toBe('slow');
    expect(classify({ code: 0, stderr: '', ms: 5, rssBytes: 2 ** 31 }).outcome).toBe('memory');
    expect(classify({ code: null, stderr: '', ms: 31_000, killed: 'time' }).outcome).toBe(
      'timeout',
    );
  });

  it('sorts refusals by the limit they name', () => {
    expect(
      rejectionKind(
        "forge sim: line 6: '{' nested 1664 deep in an entry is over the limit of 1663 (SIMULATOR_LIMITS.blockDepth): {{{",
      ),
    ).toBe('limit:blockDepth');
    expect(rejectionKind('forge sim: line 9: undeclared register %r12: mov.u32 %r12, 1;')).toBe(
      'undeclared register %…',
    );
  });
});
