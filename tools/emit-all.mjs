#!/usr/bin/env node
// Emits every catalog kernel at every in-bounds schedule into a folder: PTX for sm_80 at each PTX
// schedule, WGSL without and with f16+subgroups at each WGSL schedule. Two such folders, from
// before and after a rewrite, compared with `node tools/golden-renames.mjs --dirs OLD NEW`, show
// whether the rewrite changed any kernel beyond its local names, at schedules goldens do not pin.
//   node tools/emit-all.mjs OUT [--kernel ID]...   (needs `pnpm build`)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatSchedule, ready } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { emitPtx, ptxTarget } from '@forge/ptx';
import { emitWgsl, wgslTarget } from '@forge/wgsl';
import { kindSchedules } from './schedule-sweep.mjs';

const [out, ...rest] = process.argv.slice(2);
if (out === undefined) {
  console.error('usage: node tools/emit-all.mjs OUT [--kernel ID]...');
  process.exit(2);
}
const chosen = rest.filter((_, index) => rest[index - 1] === '--kernel');
const kernels = chosen.length > 0 ? chosen : [...CATALOG.keys()];
await ready();
let count = 0;
for (const id of kernels) {
  const { spec } = CATALOG.get(id);
  const folder = join(out, id);
  mkdirSync(folder, { recursive: true });
  const name = (schedule) => formatSchedule(schedule).replace(/[^A-Za-z0-9=_-]+/g, '_') || 'none';
  for (const schedule of kindSchedules(spec, 'ptx')) {
    writeFileSync(
      join(folder, `${name(schedule)}.ptx`),
      emitPtx(spec, schedule, ptxTarget('sm_80')).source,
    );
    count++;
  }
  for (const schedule of kindSchedules(spec, 'wgsl'))
    for (const features of [[], ['f16', 'subgroups']]) {
      const shader = emitWgsl(spec, schedule, wgslTarget(features));
      writeFileSync(
        join(folder, `${name(schedule)}.${features.length > 0 ? 'f16-subgroups.' : ''}wgsl`),
        shader.source,
      );
      count++;
    }
}
console.log(`emit-all: ${count} files from ${kernels.length} kernels in ${out}`);
