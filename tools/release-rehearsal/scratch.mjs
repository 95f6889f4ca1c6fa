// The scratch copy: the checkout's files committed to a fresh git repository and installed
// offline, pointed at the local registry, then `changeset version`, build and `changeset publish`.
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { MINUTE, StepError } from './process.mjs';
import { SCOPE } from './registry.mjs';
import { publishedPackages } from '../workspace.mjs';

/**
 * The checkout's .npmrc for the scratch copy, less every line that names a registry or holds a
 * credential (the rehearsal adds its own); `dropped` names the keys left out.
 */
export function rehearsalNpmrc(text) {
  const dropped = [];
  const kept = text
    .split('\n')
    .filter((line) => {
      const key = /^\s*([^=#;\s][^=]*?)\s*=/.exec(line)?.[1];
      if (key === undefined) return true;
      const risky =
        /(^|:)registry$/.test(key) ||
        /(^|:)(_authToken|_auth|_password|username|email|certfile|keyfile|always-auth)$/.test(key);
      if (risky) dropped.push(key.replace(/^(\/\/[^:]*):.*$/, '$1:<auth>'));
      return !risky;
    })
    .join('\n');
  return { kept: kept === '' || kept.endsWith('\n') ? kept : `${kept}\n`, dropped };
}

/** `environment` less the usual token variables, so nothing can authenticate to a real registry. */
export function withoutCredentials(environment) {
  return Object.fromEntries(
    Object.entries(environment).filter(
      ([key]) =>
        !/^(NPM_TOKEN|NODE_AUTH_TOKEN|NPM_AUTH_TOKEN|YARN_NPM_AUTH_TOKEN)$/i.test(key) &&
        !/^npm_config_\/\//i.test(key) &&
        !/^npm_config_(_auth|_authtoken|_password)$/i.test(key),
    ),
  );
}

/** Name -> package.json of every public package of the workspace at `root`. */
function workspaceManifests(root) {
  return new Map(publishedPackages(root).map(({ manifest }) => [manifest.name, manifest]));
}

/** Name -> version of every public package of the workspace at `root`. */
function workspaceVersions(root) {
  return new Map([...workspaceManifests(root)].map(([name, manifest]) => [name, manifest.version]));
}

/** Copies the checkout's tracked and untracked-not-ignored files and commits them. */
export async function copyCheckout(rehearsal, { repoRoot, scratch, env, checkout }) {
  await rehearsal.step('scratch copy of the checkout', async () => {
    const listing = await rehearsal.exec(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard', '-z'],
      { cwd: repoRoot, env: env.base },
    );
    const files = [...new Set(listing.stdout.split('\0').filter((file) => file !== ''))];
    let copied = 0;
    for (const file of files) {
      const from = join(repoRoot, file);
      let stat;
      try {
        stat = lstatSync(from);
      } catch {
        continue; // tracked but deleted in the working tree
      }
      const to = join(scratch, file);
      mkdirSync(dirname(to), { recursive: true });
      if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
      else if (stat.isFile()) copyFileSync(from, to);
      else continue;
      copied += 1;
    }
    const git = (...args) => rehearsal.exec('git', args, { cwd: scratch, env: env.git });
    await git('init', '--quiet', '--initial-branch=main');
    await git('add', '--all');
    await git(
      'commit',
      '--quiet',
      '--no-verify',
      '--message',
      `release rehearsal: snapshot of ${checkout.head.slice(0, 12)}`,
    );
    const changed = checkout.status.split('\n').filter(Boolean).length;
    if (changed > 0)
      rehearsal.note(
        `note: the checkout has ${changed} uncommitted change(s); the copy has them too`,
      );
    return `${copied} files, one commit`;
  });
}

/** `pnpm install --offline` in the copy, from the checkout's own pnpm store. */
export async function installCopy(rehearsal, { repoRoot, scratch, env }) {
  await rehearsal.step('pnpm install --offline in the copy', async () => {
    const store = (
      await rehearsal.exec('pnpm', ['store', 'path'], { cwd: repoRoot, env: env.base })
    ).stdout
      .trim()
      .split('\n')
      .pop();
    await rehearsal.exec(
      'pnpm',
      [
        'install',
        '--frozen-lockfile',
        '--offline',
        `--store-dir=${store}`,
        '--reporter=append-only',
      ],
      { cwd: scratch, env: env.git, timeoutMs: 15 * MINUTE },
    );
    return `from the store ${store}`;
  });
}

/**
 * Points the copy's npm and pnpm at the local registry only, with the user's token, and checks
 * that they see it so; resolves to the environment to publish in.
 */
export async function pointCopyAtRegistry(rehearsal, { scratch, registry, token, env, empty }) {
  const npmrc = join(scratch, '.npmrc');
  const { kept, dropped } = rehearsalNpmrc(existsSync(npmrc) ? readFileSync(npmrc, 'utf8') : '');
  const host = registry.replace(/^http:/, '');
  writeFileSync(
    npmrc,
    `${kept}# release rehearsal\n${SCOPE}:registry=${registry}\n${host}:_authToken=${token}\n`,
  );
  const publishEnv = {
    ...withoutCredentials(env.git),
    npm_config_registry: registry,
    [`npm_config_${SCOPE}:registry`]: registry,
    // The user's and the machine's npm config (tokens for real registries) stay out of it.
    npm_config_userconfig: empty.userNpmrc,
    npm_config_globalconfig: empty.globalNpmrc,
  };
  await rehearsal.step('registry settings of the copy', async () => {
    const settings = [];
    for (const [tool, key] of [
      ['npm', 'registry'],
      ['npm', `${SCOPE}:registry`],
      ['pnpm', 'registry'],
      ['pnpm', `${SCOPE}:registry`],
    ]) {
      const { stdout } = await rehearsal.exec(tool, ['config', 'get', key], {
        cwd: scratch,
        env: publishEnv,
      });
      const value = stdout.trim().replace(/\/?$/, '/');
      if (value !== registry)
        throw new StepError(
          `\`${tool} config get ${key}\` in the copy is ${value}, not ${registry}`,
        );
      settings.push(`${tool} ${key}`);
    }
    // publishConfig.registry would beat all of the above in pnpm publish.
    for (const [name, manifest] of workspaceManifests(scratch)) {
      const elsewhere = Object.entries(manifest.publishConfig ?? {}).filter(([key]) =>
        /(^|:)registry$/.test(key),
      );
      if (elsewhere.length > 0)
        throw new StepError(
          `${name} has publishConfig ${elsewhere.map(([k, v]) => `${k}=${v}`).join(', ')}; ` +
            'the rehearsal will not publish a package that names its own registry',
        );
    }
    if (dropped.length > 0)
      rehearsal.note(`note: left out of the copy's .npmrc: ${dropped.join(', ')}`);
    return `${settings.join(', ')} all point at ${registry}; no publishConfig registry`;
  });
  return publishEnv;
}

/** `changeset version` in the copy; resolves to name -> new version of every public package. */
export async function versionPackages(rehearsal, { scratch, env }) {
  const before = workspaceVersions(scratch);
  let versions;
  await rehearsal.step('changeset version', async () => {
    await rehearsal.exec('pnpm', ['changeset', 'version'], { cwd: scratch, env: env.publish });
    versions = workspaceVersions(scratch);
    return [...versions]
      .map(([name, version]) => `${name} ${before.get(name)} -> ${version}`)
      .join(', ');
  });
  return versions;
}

export async function buildCopy(rehearsal, { scratch, env, versions }) {
  await rehearsal.step('pnpm build in the copy', async () => {
    await rehearsal.exec('pnpm', ['build'], {
      cwd: scratch,
      env: env.publish,
      timeoutMs: 20 * MINUTE,
    });
    return `${versions.size} packages built`;
  });
}

export async function publishPackages(rehearsal, { scratch, env }) {
  await rehearsal.step('changeset publish', async () => {
    const { output } = await rehearsal.exec('pnpm', ['changeset', 'publish'], {
      cwd: scratch,
      env: env.publish,
      timeoutMs: 15 * MINUTE,
    });
    if (/packages failed to publish|an error occurred while publishing/.test(output))
      throw new StepError('changeset publish reported a failure', {
        command: 'pnpm changeset publish',
        cwd: scratch,
        output,
      });
    const tags = await rehearsal.exec('git', ['tag', '--list'], { cwd: scratch, env: env.git });
    return `git tags in the copy: ${tags.stdout.trim().split('\n').filter(Boolean).join(' ')}`;
  });
}
