import fc from 'fast-check';
import { catalogCase } from './catalog-mutants.mjs';
import { Picker } from './picker.mjs';
import { grammarCase } from './spec-grammar.mjs';

/**
 * A fuzz case: `{ source, tags, spec, schedule: { ptx, wgsl }, ptxArchs, wgslFeatures }`. About 60%
 * come from the IR grammar, 25% are mutated catalog kernels, and 15% are grammar specs the oracle
 * rebuilds through the builder API (source `builder`), whose shared sub-expressions stay shared.
 */
export function fuzzCaseArbitrary() {
  let index = 0;
  return fc.gen().map((g) => {
    const p = new Picker(g);
    const source = p.weighted([
      [12, 'grammar'],
      [5, 'catalog'],
      [3, 'builder'],
    ]);
    if (source === 'catalog') return catalogCase(p);
    const generated = grammarCase(p, index++);
    return source === 'builder' ? { ...generated, source } : generated;
  });
}
