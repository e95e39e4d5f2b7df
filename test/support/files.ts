import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Where a test keeps what a person may look at afterwards (screenshots, a service's log): test-artifacts/, ignored by git. */
export function artifactPath(name: string): string {
  const dir = join(__dirname, '..', '..', 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

export const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), `gs-${prefix}-`));

export function writeTree(root: string, files: Record<string, string>) {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}

/** Every file below a folder, relative, skipping .git. */
export function allFiles(root: string, rel = ''): string[] {
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((e) => {
    if (e.name === '.git') return [];
    const child = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? allFiles(root, child) : [child];
  });
}

export function readTree(root: string): Record<string, string> {
  return Object.fromEntries(allFiles(root).map((f) => [f, readFileSync(join(root, f), 'utf8')]));
}

export function kustomize(dir: string): any[] {
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(out)
    .map((d: any) => d.toJS())
    .filter(Boolean);
}

export function yamlObjects(file: string): any[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d: any) => d.toJS())
    .filter(Boolean);
}

/**
 * The environment of a child process the tests start: PATH, the given settings and a HOME of its own
 * (kubectl keeps a cache under $HOME/.kube; without HOME it would write into the working directory).
 */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries({ PATH: process.env.PATH!, HOME: tempDir('home'), ...extra }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
}

/** The project root, whether this file runs from test/ (jest) or from dist/test/ (benchmarks). */
export function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}
