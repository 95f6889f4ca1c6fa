import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assemblePtx, ptxTargetArch } from './ptxas.js';

// The simulator's hand-written fixtures must be PTX that ptxas accepts, or its tests prove little.
const FIXTURES = new URL('../../ptx-sim/src/fixtures/', import.meta.url);
const files = readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ptx'))
  .sort();

describe('@forge/ptx-sim fixtures under ptxas', () => {
  it('finds the fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(24);
  });

  it.each(files)('%s assembles', (file) => {
    const source = readFileSync(new URL(file, FIXTURES), 'utf8');
    const arch = ptxTargetArch(source) ?? 'sm_80';
    const result = assemblePtx(source, arch);
    expect(result.diagnostics, result.diagnostics).not.toMatch(/error/i);
    expect(result.ok).toBe(true);
  });
});
