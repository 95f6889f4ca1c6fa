import { ready } from '@forge/ir';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from './campaign.mjs';

// The bounded fuzz run of `pnpm test`: a fixed seed through ptxas, Tint and pipeline creation.
// `pnpm fuzz --minutes N` runs the same campaign for longer from any seed.

const SEED = 20261201;
const RUNS = 300;

beforeAll(() => ready());

describe('bounded fuzz campaign', () => {
  it(`${RUNS} specs: every accepted one passes the vendor tools, every rejection is a one-line ForgeError`, async () => {
    const campaign = await runCampaign({ seed: SEED, numRuns: RUNS });
    const failures = campaign.groups.map(
      (group) =>
        `${group.count}× ${group.key} (e.g. run ${group.example.index}: ${group.example.message})`,
    );
    const { counts } = campaign;
    expect(failures, `counts ${JSON.stringify(counts)}`).toEqual([]);
    expect(counts.tried).toBe(RUNS);
    // The generator must keep exercising the vendor tools, not just the validator.
    expect(counts.accepted / counts.tried).toBeGreaterThan(0.25);
    expect(counts.rejected).toBeGreaterThan(0);
  }, 300_000);
});
