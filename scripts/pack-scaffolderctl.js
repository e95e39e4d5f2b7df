// scaffolderctl as a package of its own (#49): the built files it loads, its bin, and a package.json naming only the
// packages those files require (at the repository's versions), packed with `npm pack`. An operator installs the
// tarball with `npm install -g scaffolderctl-<version>.tgz`: no NestJS, no Kubernetes client, no generator.
// Run after a build: npm run pack:ctl (writes .work/scaffolderctl/ and prints the tarball's path).
'use strict';
const { execFileSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');

const root = join(__dirname, '..');
const entry = join(root, 'dist/src/ctl.js');

/** The built file of a library named by package.json's `imports` (`#libs/git/build-box`), or undefined for any other specifier. */
function libraryFile(spec) {
  const library = /^#libs\/([a-z-]+)(?:\/(.+))?$/.exec(spec);
  if (!library) return undefined;
  const file = join(root, 'dist/libs', library[1], 'src', `${library[2] ?? 'index'}.js`);
  if (!existsSync(file)) throw new Error(`${spec} is not built (${relative(root, file)})`);
  return file;
}

/**
 * Every built file reachable from `entry` through require() (tsc writes `import` and `import()` as require calls),
 * and the packages they require by name. Read from the text, not by running it: every command's files, the lazily
 * loaded ones included.
 */
function reachable(start) {
  const files = new Set();
  const packages = new Set();
  const visit = (file) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/\brequire\(["']([^"']+)["']\)/g)) {
      if (spec.startsWith('node:')) continue;
      // A library by name: package.json's `imports` map (carried into the package's manifest) names its built file.
      const library = libraryFile(spec);
      if (library) {
        visit(library);
        continue;
      }
      if (!spec.startsWith('.')) {
        packages.add(
          spec
            .split('/')
            .slice(0, spec.startsWith('@') ? 2 : 1)
            .join('/'),
        );
        continue;
      }
      const base = resolve(dirname(file), spec);
      const found = [`${base}.js`, join(base, 'index.js'), base].find((f) => existsSync(f) && f.endsWith('.js'));
      if (!found) throw new Error(`${relative(root, file)} requires ${spec}, which was not built`);
      visit(found);
    }
  };
  visit(start);
  return { files: [...files].sort(), packages: [...packages].sort() };
}

/** The package.json of the scaffolderctl package: its own name, the repository's version of each package it needs. */
function manifest(packages) {
  const repo = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const versionOf = (name) => {
    const version = repo.dependencies[name];
    if (!version) throw new Error(`scaffolderctl requires ${name}, which is not a dependency in package.json`);
    return version;
  };
  return {
    name: 'scaffolderctl',
    version: repo.version,
    description: "GitOps Scaffolder's command-line client (REST API) and ops tool (event stream, read-model)",
    license: repo.license,
    // Run on Node 20 and 26 (the repository's own): the API client is Node's fetch, the rest plain CommonJS.
    engines: { node: '>=20' },
    bin: { scaffolderctl: 'bin/scaffolderctl' },
    // The libraries by name, as the built files require them (the package keeps the repository's dist/ layout).
    imports: repo.imports,
    // TypeORM loads the PostgreSQL driver by name when a command opens the read-model: required, though never by a
    // require() of ours.
    dependencies: Object.fromEntries([...new Set([...packages, 'pg'])].sort().map((p) => [p, versionOf(p)])),
  };
}

function main() {
  if (!existsSync(entry)) throw new Error('dist/src/ctl.js is not there: npm run build first');
  const out = resolve(process.argv[2] ?? join(root, '.work/scaffolderctl'));
  const stage = join(out, 'package');
  rmSync(stage, { recursive: true, force: true });
  const { files, packages } = reachable(entry);
  for (const file of [join(root, 'bin/scaffolderctl'), ...files]) {
    const to = join(stage, relative(root, file));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(file, to);
  }
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest(packages), null, 2)}\n`);
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }),
  );
  console.log(join(out, packed.filename));
}

main();
