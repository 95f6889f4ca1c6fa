// The repository's layout as the tools see it: its root, and the packages it publishes.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is tools/workspace.mjs). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every package under `root`/packages/ that is not private: `{ directory, manifest }`, by directory name. */
export function publishedPackages(root) {
  return readdirSync(join(root, 'packages'))
    .sort()
    .filter((directory) => existsSync(join(root, 'packages', directory, 'package.json')))
    .map((directory) => ({
      directory,
      manifest: JSON.parse(readFileSync(join(root, 'packages', directory, 'package.json'), 'utf8')),
    }))
    .filter(({ manifest }) => manifest.private !== true);
}

/** The packages this repository publishes. */
export const PUBLISHED_PACKAGES = publishedPackages(ROOT);

/** The first ```js block of a package's README: the example a newcomer copies. */
export function readmeExample(directory) {
  const readme = readFileSync(join(ROOT, 'packages', directory, 'README.md'), 'utf8');
  const match = /^```js\n([\s\S]*?)^```$/m.exec(readme);
  if (match === null) throw new Error(`packages/${directory}/README.md has no \`\`\`js example`);
  return match[1];
}
