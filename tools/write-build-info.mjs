// Writes src/build-info.ts into every published package from its package.json, at build time, so
// nothing reads package.json at run time (a bundled engine has no such file, or an unrelated one).
// Run by each package's `build` script; writes only files whose text changes.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLISHED_PACKAGES, ROOT } from './workspace.mjs';

for (const { directory: name, manifest } of PUBLISHED_PACKAGES) {
  const directory = join(ROOT, 'packages', name);
  if (!existsSync(join(directory, 'src'))) continue;
  const text = [
    '// Written by tools/write-build-info.mjs from package.json at build time; not in git, do not edit.',
    '',
    "/** This package's name and version, fixed when it was built. */",
    `export const BUILD_INFO = { name: ${JSON.stringify(manifest.name)}, version: ${JSON.stringify(manifest.version)} } as const;`,
    '',
  ].join('\n');
  const target = join(directory, 'src', 'build-info.ts');
  if (existsSync(target) && readFileSync(target, 'utf8') === text) continue;
  // Packages build in parallel and each runs this script: write aside, then rename into place.
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, target);
}
