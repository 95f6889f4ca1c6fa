// What `changeset publish` put on the registry: every manifest and tarball, checked as the users
// of the packages will get them.
import { gunzipSync } from 'node:zlib';
import { kilobytes } from './format.mjs';
import { StepError } from './process.mjs';
import { fetchJson, request } from './registry.mjs';

/** The files of a .tgz as a Map from path (with npm's `package/` prefix) to bytes. */
export function readTarball(gzipped) {
  const data = gunzipSync(gzipped);
  const files = new Map();
  let offset = 0;
  let longName;
  const text = (start, length) => {
    const field = data.subarray(start, start + length);
    const end = field.indexOf(0);
    return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
  };
  while (offset + 512 <= data.length) {
    const header = data.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = text(offset + 345, 155);
    let name = prefix === '' ? text(offset, 100) : `${prefix}/${text(offset, 100)}`;
    const body = data.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      // pax extended header: "<length> path=<name>\n" records apply to the next entry.
      const path = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (path !== null) longName = path[1];
      continue;
    }
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    if (type === 'g') continue;
    if (longName !== undefined) {
      name = longName;
      longName = undefined;
    }
    if (type === '0' || type === '\0' || type === '7') files.set(name, Buffer.from(body));
  }
  return files;
}

/** Every file a manifest points at: main, module, types, bin and exports (wildcards left out). */
export function entryPoints(manifest) {
  const found = new Set();
  const add = (value) => {
    if (typeof value === 'string') {
      if (!value.includes('*')) found.add(value.replace(/^\.\//, ''));
    } else if (Array.isArray(value)) value.forEach(add);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(add);
  };
  for (const field of ['main', 'module', 'types', 'typings', 'bin', 'exports'])
    add(manifest[field]);
  return [...found].sort();
}

/** `field name@range` for every dependency range that still says `workspace:`. */
export function workspaceRanges(manifest) {
  const found = [];
  for (const field of [
    'dependencies',
    'peerDependencies',
    'optionalDependencies',
    'devDependencies',
  ])
    for (const [name, range] of Object.entries(manifest[field] ?? {}))
      if (String(range).startsWith('workspace:')) found.push(`${field} ${name}@${range}`);
  return found;
}

/**
 * What is wrong with one published package: `manifest` is the registry's manifest of `version`,
 * `packed` the package.json in its tarball, `files` the tarball's files, `versions` name ->
 * version of every package this rehearsal published.
 */
export function packageProblems({ name, version, manifest, packed, files, versions }) {
  const problems = [];
  for (const [label, fields] of [
    ['registry manifest', manifest],
    ['package.json in the tarball', packed],
  ]) {
    for (const range of workspaceRanges(fields))
      problems.push(`${name}@${version}: ${label} keeps ${range}`);
    // Dawn's native binaries are for the users who run WGSL, not for everyone who installs Forge.
    for (const field of ['dependencies', 'optionalDependencies'])
      if (Object.hasOwn(fields[field] ?? {}, 'webgpu'))
        problems.push(`${name}: ${label} has webgpu in ${field}; it is an optional peer`);
  }
  // npm installs every peer dependency that is not marked optional.
  if (
    packed.peerDependencies?.webgpu !== undefined &&
    packed.peerDependenciesMeta?.webgpu?.optional !== true
  )
    problems.push(`${name}: peer dependency webgpu is not optional, so npm installs it`);
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
    for (const [dependency, range] of Object.entries(packed[field] ?? {})) {
      const target = versions.get(dependency);
      if (target === undefined || range.startsWith('workspace:')) continue;
      if (![target, `^${target}`, `~${target}`].includes(range))
        problems.push(`${name}: ${field} ${dependency}@${range} misses ${target}`);
    }
  for (const path of entryPoints(packed))
    if (!files.has(`package/${path}`))
      problems.push(`${name}: ${path} (from package.json) is not in the tarball`);
  for (const file of ['README.md', 'LICENSE'])
    if (!files.has(`package/${file}`)) problems.push(`${name}: no ${file} in the tarball`);
  if (packed.repository === undefined) problems.push(`${name}: no "repository" in package.json`);
  if (typeof packed.engines?.node !== 'string')
    problems.push(`${name}: no "engines": { "node" } in package.json`);
  return problems;
}

/** One line per package: files, sizes, dependencies and peer dependencies. */
function packageSummary({ name, version, packed, files, packedBytes }) {
  const unpacked = [...files.values()].reduce((sum, bytes) => sum + bytes.length, 0);
  const list = (dependencies, describe = () => '') =>
    Object.entries(dependencies ?? {})
      .map(([dependency, range]) => `${dependency}@${range}${describe(dependency)}`)
      .join(' ');
  const peers = list(packed.peerDependencies, (peer) =>
    packed.peerDependenciesMeta?.[peer]?.optional === true ? ' (optional)' : '',
  );
  return (
    `${name}@${version}: ${files.size} files, ${kilobytes(packedBytes)} packed, ` +
    `${kilobytes(unpacked)} unpacked; dependencies: ${list(packed.dependencies) || 'none'}` +
    (peers === '' ? '' : `; peer dependencies: ${peers}`)
  );
}

/**
 * Fetches every published manifest and tarball and fails on any package problem; resolves to
 * name -> { version, integrity, peerDependencies } as published.
 */
export async function checkPublished(rehearsal, { registry, versions }) {
  const published = new Map();
  await rehearsal.step('published manifests and tarballs', async () => {
    const { signal } = rehearsal.abort;
    const problems = [];
    const lines = [];
    const shipped = new Map();
    for (const [name, version] of versions) {
      const { status, body } = await fetchJson(new URL(name.replace('/', '%2f'), registry), signal);
      if (status !== 200) {
        problems.push(`${name}: GET answered ${status}`);
        continue;
      }
      const manifest = body.versions?.[version];
      if (manifest === undefined) {
        problems.push(`${name}@${version} is not on the registry`);
        continue;
      }
      if (body['dist-tags']?.latest !== version)
        problems.push(`${name}: latest is ${body['dist-tags']?.latest}, expected ${version}`);
      const response = await request(manifest.dist.tarball, signal);
      if (!response.ok) {
        problems.push(`${name}: tarball ${manifest.dist.tarball} answered ${response.status}`);
        continue;
      }
      const tarball = Buffer.from(await response.arrayBuffer());
      const files = readTarball(tarball);
      const packed = JSON.parse(files.get('package/package.json')?.toString('utf8') ?? '{}');
      problems.push(...packageProblems({ name, version, manifest, packed, files, versions }));
      published.set(name, {
        version,
        integrity: manifest.dist?.integrity,
        peerDependencies: packed.peerDependencies ?? {},
      });
      // Not wrong in itself, but every user downloads them: worth a look.
      const names = [...files.keys()].map((file) => file.replace(/^package\//, ''));
      for (const [what, found] of [
        [
          'test files in the tarball',
          names.some((file) => /\.test\.|(^|\/)__tests__\//.test(file)),
        ],
        ['src/ in the tarball', names.some((file) => file.startsWith('src/'))],
      ])
        if (found) shipped.set(what, [...(shipped.get(what) ?? []), name]);
      lines.push(packageSummary({ name, version, packed, files, packedBytes: tarball.length }));
    }
    if (problems.length > 0)
      throw new StepError(`the published packages have problems:\n${problems.join('\n')}`);
    for (const line of lines) rehearsal.note(line);
    for (const [what, names] of shipped) rehearsal.note(`note: ${what}: ${names.join(', ')}`);
    return (
      `${published.size} packages, each with README.md, LICENSE, repository, engines and every ` +
      'entry point; no workspace: ranges; webgpu only an optional peer'
    );
  });
  return published;
}
