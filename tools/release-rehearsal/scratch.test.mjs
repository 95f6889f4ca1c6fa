import { describe, expect, it } from 'vitest';
import { rehearsalNpmrc, withoutCredentials } from './scratch.mjs';

describe('credentials and registries in the scratch copy', () => {
  it("keeps the checkout's .npmrc settings but no registry or credential line", () => {
    const { kept, dropped } = rehearsalNpmrc(
      [
        '# comment',
        'reporter=silent',
        'registry=https://mirror.example/',
        '@forge:registry = https://registry.npmjs.org/',
        '//registry.npmjs.org/:_authToken=${NPM_TOKEN}',
      ].join('\n'),
    );
    expect(kept).toBe('# comment\nreporter=silent\n');
    expect(dropped).toEqual(['registry', '@forge:registry', '//registry.npmjs.org/:<auth>']);
  });

  it('drops token variables from the publishing environment', () => {
    expect(
      withoutCredentials({
        HOME: '/root',
        NPM_TOKEN: 'x',
        NODE_AUTH_TOKEN: 'x',
        'npm_config_//registry.npmjs.org/:_authToken': 'x',
      }),
    ).toEqual({ HOME: '/root' });
  });
});
