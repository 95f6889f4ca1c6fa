// The consumer: a project outside the monorepo that installs Forge from the local registry with
// npm, as a user would, and runs the installed forge, ptxas and the API.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { consumerScript } from './consumer-api.mjs';
import { kilobytes, quote } from './format.mjs';
import { MINUTE, StepError, isInside } from './process.mjs';
import { SCOPE } from './registry.mjs';

/** What a user installs; @forge/ptx-sim comes along as a dependency of @forge/cli. */
const CONSUMER_PACKAGES = ['@forge/ir', '@forge/ptx', '@forge/wgsl', '@forge/cli'];
const GOLDEN_PTX = join('golden', 'ptx', 'rmsnorm.sm_80.ptx');
const GOLDEN_WGSL = join('golden', 'wgsl', 'rmsnorm.wgsl');
/** npx's arguments before forge's: `--no` refuses to fetch a forge that is not installed. */
const NPX_FORGE = ['--no', '--', 'forge'];

/** Relative paths of everything under `root` (directories end in '/'); links are not followed. */
function treeListing(root) {
  const found = [];
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      const rel = relative(root, path);
      if (entry.isDirectory()) {
        found.push(`${rel}/`);
        walk(path);
      } else found.push(rel);
    }
  };
  walk(root);
  return found;
}

function directorySize(root) {
  let total = 0;
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) total += lstatSync(path).size;
    }
  };
  if (existsSync(root)) walk(root);
  return total;
}

/** Installed top-level packages of a node_modules folder by size, biggest first. */
function packageSizes(nodeModules) {
  const sizes = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? readdirSync(join(nodeModules, entry.name)).map((name) => `${entry.name}/${name}`)
      : [entry.name];
    for (const name of names) sizes.push({ name, bytes: directorySize(join(nodeModules, name)) });
  }
  return sizes.sort((a, b) => b.bytes - a.bytes);
}

/** name -> version of every package the rehearsal published. */
const publishedVersions = (published) =>
  Object.fromEntries([...published].map(([name, { version }]) => [name, version]));

/** The installed forge, through npx as a user runs it. */
function forge(rehearsal, { consumer, env }, args, options = {}) {
  return rehearsal.exec('npx', [...NPX_FORGE, ...args], {
    cwd: consumer,
    env: env.base,
    ...options,
  });
}

/**
 * Runs the installed forge where it must refuse: exit `code`, nothing on stdout, nothing written,
 * one line on stderr that contains `naming`. Resolves to that line.
 */
async function expectRefusal(rehearsal, context, args, { code, naming }) {
  const { consumer } = context;
  const listing = new Set(treeListing(consumer));
  const result = await forge(rehearsal, context, args, { expectCode: 'any' });
  const problems = [];
  // npx's own warnings (npm config it does not know, say) are npm's, not forge's.
  const lines = result.stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^npm (warn|notice) /.test(line));
  if (result.code !== code) problems.push(`exit status ${result.code}, expected ${code}`);
  if (lines.length !== 1) problems.push(`stderr has ${lines.length} lines, expected 1`);
  else if (!lines[0].includes(naming)) problems.push(`its message does not name ${naming}`);
  if (result.stdout.trim() !== '') problems.push('it printed on stdout');
  const added = treeListing(consumer).filter((path) => !listing.has(path));
  if (added.length > 0) problems.push(`it created ${added.slice(0, 5).join(', ')}`);
  if (problems.length > 0)
    throw new StepError(`forge ${args.join(' ')} in the consumer: ${problems.join('; ')}`, {
      command: ['npx', ...NPX_FORGE, ...args].map(quote).join(' '),
      cwd: consumer,
      output: `${result.stdout}${result.stderr}`,
    });
  return lines[0];
}

/** A project outside the monorepo whose npm takes @forge, and nothing else, from the registry. */
export async function createConsumer(rehearsal, { consumer, registry, env }) {
  mkdirSync(consumer);
  await rehearsal.step('consumer project', async () => {
    const npm = (...args) => rehearsal.exec('npm', args, { cwd: consumer, env: env.base });
    await npm('init', '-y');
    writeFileSync(join(consumer, '.npmrc'), `${SCOPE}:registry=${registry}\n`);
    const scoped = (await npm('config', 'get', `${SCOPE}:registry`)).stdout.trim();
    const general = (await npm('config', 'get', 'registry')).stdout.trim();
    if (scoped.replace(/\/?$/, '/') !== registry)
      throw new StepError(`npm's ${SCOPE}:registry in the consumer is ${scoped}, not ${registry}`);
    if (general.replace(/\/?$/, '/') === registry)
      throw new StepError('the consumer sends every package to the local registry');
    return `${consumer}; ${SCOPE} from ${registry}, everything else from ${general}`;
  });
}

/** npm install of the user-facing packages: the tarballs published here and no webgpu. */
export async function installIntoConsumer(rehearsal, { consumer, registry, env, published }) {
  await rehearsal.step(`npm install ${CONSUMER_PACKAGES.join(' ')}`, async () => {
    const { output } = await rehearsal.exec(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-online',
        '--omit-lockfile-registry-resolved=false',
        ...CONSUMER_PACKAGES,
      ],
      { cwd: consumer, env: env.base, timeoutMs: 20 * MINUTE },
    );
    const lock = JSON.parse(readFileSync(join(consumer, 'package-lock.json'), 'utf8'));
    const problems = [];
    const installed = [];
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      // An optional peer: npm must leave it out.
      if (/(?:^|\/)node_modules\/webgpu$/.test(path))
        problems.push(`${path}: webgpu@${entry.version} was installed`);
      const match = /(?:^|\/)node_modules\/(@forge\/[^/]+)$/.exec(path);
      if (match === null) continue;
      const name = match[1];
      installed.push(`${name}@${entry.version}`);
      const want = published.get(name);
      if (want === undefined) problems.push(`${path}: ${name} was not published here`);
      else {
        if (entry.version !== want.version)
          problems.push(`${path}: version ${entry.version}, published ${want.version}`);
        if (entry.integrity !== want.integrity)
          problems.push(`${path}: integrity differs from the local registry's tarball`);
      }
      if (entry.resolved !== undefined && !entry.resolved.startsWith(registry))
        problems.push(`${path}: resolved from ${entry.resolved}`);
    }
    for (const name of CONSUMER_PACKAGES)
      if (!installed.some((item) => item.startsWith(`${name}@`)))
        problems.push(`${name} is not in package-lock.json`);
    if (problems.length > 0)
      throw new StepError(`the consumer's packages are wrong:\n${problems.join('\n')}`);
    const packages = Object.keys(lock.packages ?? {}).filter((path) => path !== '').length;
    const sizes = packageSizes(join(consumer, 'node_modules'));
    const total = sizes.reduce((sum, item) => sum + item.bytes, 0);
    const biggest = sizes
      .slice(0, 3)
      .map((item) => `${item.name} ${kilobytes(item.bytes)}`)
      .join(', ');
    // What a user sees from npm while installing Forge (deprecations, install scripts...).
    const warnings = [
      ...new Set(
        output
          .split('\n')
          .filter((line) => /^npm warn /i.test(line))
          .map((line) => line.replace(/^npm warn\s+/i, '').trim())
          .filter((line) => /\s/.test(line)),
      ),
    ].join(' | ');
    if (warnings !== '') rehearsal.note(`npm warned the consumer: ${warnings.slice(0, 400)}`);
    rehearsal.note(
      `consumer node_modules: ${packages} packages, ${kilobytes(total)}; biggest: ${biggest}`,
    );
    return `${installed.sort().join(' ')} from ${registry}`;
  });
}

export async function checkVersion(rehearsal, context) {
  await rehearsal.step('forge --version', async () => {
    const bin = join(context.consumer, 'node_modules', '.bin', 'forge');
    if (!existsSync(bin)) throw new StepError('node_modules/.bin/forge is missing in the consumer');
    const target = realpathSync(bin);
    if (!isInside(target, join(context.consumer, 'node_modules', '@forge', 'cli')))
      throw new StepError(`node_modules/.bin/forge points at ${target}, not @forge/cli`);
    const { stdout } = await forge(rehearsal, context, ['--version']);
    const said = new Map(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/)),
    );
    const wrong = Object.entries(publishedVersions(context.published)).filter(
      ([name, version]) => said.get(name) !== version,
    );
    if (wrong.length > 0)
      throw new StepError(
        `forge --version says\n${stdout.trim()}\nbut the registry has ${wrong
          .map(([name, version]) => `${name}@${version}`)
          .join(', ')}`,
      );
    return stdout.trim().split('\n').join(', ');
  });
}

export async function checkList(rehearsal, context) {
  await rehearsal.step('forge list', async () => {
    const { stdout } = await forge(rehearsal, context, ['list']);
    const kernels = stdout.split('\n').filter((line) => /^\S/.test(line));
    if (!kernels.some((line) => line.startsWith('rmsnorm ')))
      throw new StepError(`forge list does not list rmsnorm:\n${stdout}`);
    return `${kernels.length} kernels: ${kernels.map((line) => line.split(/\s+/)[0]).join(', ')}`;
  });
}

/** Fails unless the consumer's `file` has the bytes of the checkout's `golden` file. */
function expectGolden({ consumer, repoRoot }, file, golden) {
  const made = readFileSync(join(consumer, file));
  const want = readFileSync(join(repoRoot, golden));
  if (made.equals(want)) return;
  const madeLines = made.toString('utf8').split('\n');
  const wantLines = want.toString('utf8').split('\n');
  const line = madeLines.findIndex((text, index) => text !== wantLines[index]);
  throw new StepError(
    `${file} differs from ${golden} at line ${line + 1}:\n` +
      `  emitted: ${JSON.stringify(madeLines[line])}\n  golden:  ${JSON.stringify(wantLines[line])}`,
  );
}

export async function checkEmitPtx(rehearsal, context) {
  await rehearsal.step('forge emit rmsnorm --target ptx --arch sm_80 + ptxas', async () => {
    const emit = ['emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80', '--out', 'rmsnorm.ptx'];
    await forge(rehearsal, context, emit);
    expectGolden(context, 'rmsnorm.ptx', GOLDEN_PTX);
    await rehearsal.exec('ptxas', ['-arch=sm_80', 'rmsnorm.ptx', '-o', 'rmsnorm.cubin'], {
      cwd: context.consumer,
      env: context.env.base,
    });
    const cubin = lstatSync(join(context.consumer, 'rmsnorm.cubin')).size;
    if (cubin === 0) throw new StepError('ptxas wrote an empty rmsnorm.cubin');
    return `same bytes as ${GOLDEN_PTX}; ptxas -arch=sm_80 exit 0, cubin ${cubin} bytes`;
  });
}

export async function checkEmitWgsl(rehearsal, context) {
  await rehearsal.step('forge emit rmsnorm --target wgsl', async () => {
    await forge(rehearsal, context, [
      'emit',
      'rmsnorm',
      '--target',
      'wgsl',
      '--out',
      'rmsnorm.wgsl',
    ]);
    expectGolden(context, 'rmsnorm.wgsl', GOLDEN_WGSL);
    return `same bytes as ${GOLDEN_WGSL}`;
  });
}

/** Without the optional peer webgpu, a WebGPU run says in one line what to install. */
export async function checkRunWithoutWebgpu(rehearsal, context) {
  await rehearsal.step('forge run rmsnorm --target wgsl without webgpu', async () => {
    if (existsSync(join(context.consumer, 'node_modules', 'webgpu')))
      throw new StepError('webgpu is installed in the consumer; this check needs it absent');
    const range = context.published.get('@forge/wgsl')?.peerDependencies.webgpu;
    if (range === undefined)
      throw new StepError('the published @forge/wgsl has no peer dependency webgpu');
    const run = ['run', 'rmsnorm', '--target', 'wgsl', '--shape', 'n_embd=64'];
    const naming = `npm install webgpu@${range}`;
    const line = await expectRefusal(rehearsal, context, run, { code: 1, naming });
    return `exit 1, nothing written: ${line}`;
  });
}

/** The API through `import` and through `require()`: versions, cache keys, golden, ptxas. */
export async function checkApi(rehearsal, { consumer, repoRoot, env, published }) {
  const versions = publishedVersions(published);
  const apiEnv = {
    ...env.base,
    FORGE_REHEARSAL_EXPECT: JSON.stringify({
      versions,
      golden: { ptx: join(repoRoot, GOLDEN_PTX), wgsl: join(repoRoot, GOLDEN_WGSL) },
    }),
  };
  for (const [kind, file, how] of [
    ['esm', 'api-check.mjs', 'import (ES module)'],
    ['cjs', 'api-check.cjs', 'require() (CommonJS)'],
  ])
    await rehearsal.step(`API through ${how}`, async () => {
      writeFileSync(join(consumer, file), consumerScript(kind));
      const { stdout } = await rehearsal.exec(process.execPath, [file], {
        cwd: consumer,
        env: apiEnv,
      });
      const result = JSON.parse(stdout.trim().split('\n').pop());
      return (
        `ready(), emitPtx + emitWgsl match golden, backends and cache keys carry ` +
        `${versions['@forge/ptx']}/${versions['@forge/wgsl']}, ptxas via @forge/ptx/ptxas ` +
        `(${result.registers} registers)`
      );
    });
}

/** An installed forge has no golden directory: it refuses and points at --dir. */
export async function checkGoldenUpdate(rehearsal, context) {
  await rehearsal.step('forge golden update outside a checkout', async () => {
    const naming = '--dir';
    const line = await expectRefusal(rehearsal, context, ['golden', 'update'], { code: 2, naming });
    return `exit 2, nothing written: ${line}`;
  });
}
