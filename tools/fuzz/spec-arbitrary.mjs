import fc from 'fast-check';
import { catalogCase } from './catalog-mutants.mjs';
import { mutateJson } from './json-mutants.mjs';
import { Picker } from './picker.mjs';
import { grammarCase } from './spec-grammar.mjs';

/**
 * A fuzz case: `{ source, tags, spec, schedule: { ptx, wgsl }, ptxArchs, wgslFeatures }`. About 55%
 * come from the IR grammar, 23% are mutated catalog kernels, 14% are grammar specs the oracle
 * rebuilds through the builder API (source `builder`), whose shared sub-expressions stay shared,
 * and 9% are grammar or catalog specs broken at the JSON level (source `json`).
 */
export function fuzzCaseArbitrary() {
  let index = 0;
  return fc.gen().map((g) => {
    const p = new Picker(g);
    const source = p.weighted([
      [12, 'grammar'],
      [5, 'catalog'],
      [3, 'builder'],
      [2, 'json'],
    ]);
    if (source === 'catalog') return catalogCase(p);
    if (source === 'json') {
      const base = p.chance(0.5) ? catalogCase(p) : grammarCase(p, index++);
      const tags = new Set(base.tags);
      const spec = mutateJson(p, base.spec, (tag) => tags.add(tag));
      return { ...base, source, tags: [...tags].sort(), spec };
    }
    const generated = grammarCase(p, index++);
    return source === 'builder' ? { ...generated, source } : generated;
  });
}
