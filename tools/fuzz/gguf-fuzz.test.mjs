import { describe, expect, it } from 'vitest';
import { RUN_FAILURES, classifyRun, runForge } from './cli-child.mjs';
import { GGUF_BOUNDS, runGgufCampaign } from './gguf-campaign.mjs';

// The bounded GGUF fuzz run of `pnpm test`: mutants of the tiny models through `forge decode` and
// `forge run --gguf`, each bounded in time and memory and refused in one line.
// `pnpm fuzz --target gguf --minutes N` runs the same campaign for longer from any seed.

const SEED = 20261204;
const RUNS = 16;

describe('bounded GGUF fuzz campaign', () => {
  it(`${RUNS} mutated model files: one-line refusals, bounded time and memory`, async () => {
    // The time bound only catches hangs here, on a machine shared with other suites.
    const bounds = { ...GGUF_BOUNDS, ms: 60_000 };
    const campaign = await runGgufCampaign({ seed: SEED, numRuns: RUNS, bounds });
    const failures = campaign.groups.map(
      (group) =>
        `${group.count}× ${group.key} (e.g. ${group.example.tags.join(', ')}: ${group.example.message})`,
    );
    const { counts } = campaign;
    expect(failures, `counts ${JSON.stringify(counts)}`).toEqual([]);
    expect(counts.tried).toBe(RUNS);
    expect(RUN_FAILURES.reduce((sum, outcome) => sum + counts[outcome], 0)).toBe(0);
    // The mutants must reach both the refusals and, now and then, a model that still runs.
    expect(counts.rejected).toBeGreaterThan(RUNS / 2);
    expect(counts.commands).toBeGreaterThan(RUNS);
  }, 600_000);
});

describe('judging a forge decode or forge run child', () => {
  const bounds = { ms: 30_000, rssBytes: 2e8, heapMiB: 1024 };
  const judge = (change) =>
    classifyRun({ code: 2, stdout: '', stderr: 'forge decode: x: bad\n', ms: 10, rssBytes: 1e8, ...change }, bounds, () => 'check-failed'); // prettier-ignore
  it('leaves out progress lines, takes a FAIL on stdout as a failed check, and fails the rest', () => {
    expect(judge({})).toEqual({ outcome: 'rejected', message: 'forge decode: x: bad' });
    const progress = 'forge decode: 1/3 steps, 2.00 s a step, about 4.00 s left\n';
    expect(judge({ stderr: `${progress}forge decode: x: bad\n` }).outcome).toBe('rejected');
    expect(judge({ code: 0, stderr: progress }).outcome).toBe('ran');
    expect(judge({ code: 1, stderr: '', stdout: 'NMSE 1  FAIL\n' }).outcome).toBe('check-failed');
    expect(judge({ code: 2, stderr: '' }).outcome).toBe('trace');
    expect(judge({ stderr: 'TypeError: x\n    at f (a.js:1:1)\n' }).outcome).toBe('trace');
    expect(judge({ rssBytes: 3e8 }).outcome).toBe('memory');
    expect(judge({ code: 7 }).outcome).toBe('crash');
  });

  it("measures a real child's peak memory and kills it at twice its time bound", async () => {
    const version = await runForge(['--version'], { cwd: process.cwd(), bounds });
    expect(version.code).toBe(0);
    expect(version.rssBytes).toBeGreaterThan(10 * 2 ** 20);
    const slow = await runForge(['--version'], {
      cwd: process.cwd(),
      bounds: { ...bounds, ms: 1 },
    });
    expect(slow.killed).toBe('time');
  });
});
