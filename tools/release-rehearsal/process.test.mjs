import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cleanEnvironment } from './process.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('cleanEnvironment', () => {
  const path = ['/usr/bin', join(root, 'node_modules', '.bin'), '/opt/bin'].join(':');

  it('drops what pnpm run adds, scoped registry overrides and the checkout on PATH', () => {
    const environment = cleanEnvironment(
      {
        PATH: path,
        HOME: '/root',
        NPM_CONFIG_REGISTRY: 'https://mirror.example/',
        'npm_config_@forge:registry': 'https://registry.npmjs.org/',
        'NPM_CONFIG_@FORGE:REGISTRY': 'https://registry.npmjs.org/',
        npm_lifecycle_event: 'release:rehearse',
        npm_package_name: 'forge-monorepo',
        npm_config_registry: 'https://registry.npmjs.org/',
        npm_config_reporter: 'silent',
        PNPM_SCRIPT_SRC_DIR: root,
        INIT_CWD: root,
      },
      root,
    );
    expect(environment).toEqual({
      PATH: '/usr/bin:/opt/bin',
      HOME: '/root',
      NPM_CONFIG_REGISTRY: 'https://mirror.example/',
    });
  });

  it("keeps the caller's npm_config_* when not started by a package manager script", () => {
    expect(
      cleanEnvironment({ PATH: '/usr/bin', npm_config_registry: 'https://m.example/' }, root),
    ).toEqual({ PATH: '/usr/bin', npm_config_registry: 'https://m.example/' });
  });
});
