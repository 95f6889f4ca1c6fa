import { describe, expect, it } from 'vitest';
import { FAILING_RUNS, judgeRun, runForge } from './cli-child.mjs';
import { runGgufCampaign } from './gguf-campaign.mjs';

// The bounded GGUF fuzz run of `pnpm test`: mutants of the tiny models through `forge decode` and
// `forge run --gguf`, each bounded in time and memory and refused in one line.
// `pnpm fuzz --target gguf --minutes N` runs the same campaign for longer from any seed.

const SEED = 20261204;
const RUNS = 16;

describe('bounded GGUF fuzz campaign', () => {
  it(`${RUNS} mutated model files: one-line refusals, bounded time and memory`, async () => {
    const campaign = await runGgufCampaign({ seed: SEED, numRuns: RUNS });
    const failures = campaign.groups.map(
      (group) =>
        `${group.count}× ${group.key} (e.g. ${group.example.tags.join(', ')}: ${group.example.message})`,
    );
    const { counts } = campaign;
    expect(failures, `counts ${JSON.stringify(counts)}`).toEqual([]);
    expect(counts.tried).toBe(RUNS);
    expect([...FAILING_RUNS].reduce((sum, outcome) => sum + counts[outcome], 0)).toBe(0);
    // The mutants must reach both the refusals and, now and then, a model that still runs.
    expect(counts.rejected).toBeGreaterThan(RUNS / 2);
    expect(counts.commands).toBeGreaterThan(RUNS);
  }, 300_000);
});

describe('judging a CLI run', () => {
  const run = (change) => ({ code: 2, signal: null, stdout: '', stderr: 'forge decode: x: bad\n', ms: 10, maxRssBytes: 1e8, timedOut: false, ...change }); // prettier-ignore
  it('fails a trace, a timeout, a crash, memory over the bound and an unexpected exit', () => {
    expect(judgeRun(run({}), 2e8)).toEqual({
      outcome: 'rejected',
      message: 'forge decode: x: bad',
    });
    expect(judgeRun(run({ code: 0, stderr: '' }), 2e8).outcome).toBe('ran');
    expect(judgeRun(run({ stderr: 'TypeError: x\n    at f (a.js:1:1)\n' }), 2e8).outcome).toBe('not-one-line'); // prettier-ignore
    expect(judgeRun(run({ timedOut: true }), 2e8).outcome).toBe('timeout');
    expect(judgeRun(run({ maxRssBytes: undefined, signal: 'SIGABRT' }), 2e8).outcome).toBe('crash');
    expect(judgeRun(run({ maxRssBytes: 3e8 }), 2e8).outcome).toBe('memory');
    expect(judgeRun(run({ code: 7 }), 2e8).outcome).toBe('bad-exit');
    expect(judgeRun(run({ code: 2, stderr: '' }), 2e8).outcome).toBe('not-one-line');
    expect(judgeRun(run({ code: 1, stderr: '', stdout: 'NMSE 1  FAIL\n' }), 2e8)).toEqual({ outcome: 'check-failed', message: 'NMSE 1  FAIL' }); // prettier-ignore
    expect(judgeRun(run({ code: 1, stderr: 'forge decode: 1/3 steps, 2.00 s a step, about 4.00 s left\nforge decode: fault\n' }), 2e8)).toEqual({ outcome: 'check-failed', message: 'forge decode: fault' }); // prettier-ignore
  });

  it("measures a real child's peak memory and kills it at its time bound", async () => {
    const version = await runForge(['--version']);
    expect(version.code).toBe(0);
    expect(version.maxRssBytes).toBeGreaterThan(10 * 2 ** 20);
    const slow = await runForge(['decode', '/dev/stdin', '--tokens', '1', '--target', 'interp'], { timeoutMs: 1 }); // prettier-ignore
    expect(slow.timedOut).toBe(true);
  });
});
