import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The libraries depend on each other one way only (a higher library imports a lower one, never
 * the reverse), no folder (at any depth, src/ itself included) imports one that imports it, and no
 * file imports itself round a loop. Imports are read as tsc reads them:
 * `import`, `import type`, `export ... from`, `require()` and `import()`, relative ones resolved to
 * `file.ts`, `file.d.ts` or `folder/index.ts` (and `./file.js` to `file.ts`, as the console's browser
 * modules spell them); packages are not the repository's and are left out.
 */

const root = join(__dirname, '../..');
const path = (file: string) => relative(root, file).split('\\').join('/');

/** The TypeScript sources under a folder of the repository, specs left out. */
function sources(folder: string, { specs = false } = {}): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && (specs || !f.endsWith('.spec.ts')) && !f.endsWith('.d.ts'))
    .map((f) => join(root, folder, f))
    .sort();
}

/** A library by name (`#libs/git`, `#libs/git/build-box`), as package.json's `imports` maps it: its file in the repository. */
const LIBRARY_NAME = /^#libs\/([a-z-]+)(?:\/(.+))?$/;

/** The specifiers a file imports. */
const specifiersOf = (file: string) =>
  ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((i) => i.fileName);

/** The repository's files a file imports, as paths from the repository's root. */
function importsOf(file: string): string[] {
  return specifiersOf(file)
    .map((name) => {
      const library = LIBRARY_NAME.exec(name);
      if (library) return join(root, 'libs', library[1], 'src', library[2] ?? '');
      return name.startsWith('.') ? resolve(dirname(file), name) : undefined;
    })
    .filter((base): base is string => base !== undefined)
    .map((base) => {
      const candidates = [`${base}.ts`, `${base}.d.ts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts'), base];
      const found = candidates.find((f) => existsSync(f) && statSync(f).isFile());
      if (!found) throw new Error(`${path(file)} imports ${path(base)}, which is no file`);
      return path(found);
    });
}

/** Edges of a graph, each with the file imports that make it. */
type Graph = Map<string, Map<string, string[]>>;

function addEdge(graph: Graph, from: string, to: string, why: string): void {
  if (!graph.has(from)) graph.set(from, new Map());
  const out = graph.get(from)!;
  out.set(to, [...(out.get(to) ?? []), why]);
}

/** Each strongly connected set of two or more nodes (Tarjan), as one loop through it: [a, b, ..., a]. */
function loops(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.has(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => loopThrough(graph, new Set(component)));
}

/** The shortest way from the first node (in sorted order) of a component back to itself. */
function loopThrough(graph: Graph, component: Set<string>): string[] {
  const start = [...component].sort()[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (!component.has(w)) continue;
      if (w === start) {
        const loop = [start];
        for (let at = v; at !== start; at = cameFrom.get(at)!) loop.unshift(at);
        return [start, ...loop];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** A loop in words: its nodes, then the imports that make each step of it. */
function inWords(graph: Graph, loop: string[]): string {
  const steps = loop.slice(1).map((to, i) => `  ${loop[i]} -> ${to}: ${graph.get(loop[i])!.get(to)!.join(', ')}`);
  return [loop.join(' -> '), ...steps].join('\n');
}

const libraryOf = (file: string) => /^libs\/([^/]+)\//.exec(file)?.[1];
/** The service's module folder of a file (src/<concern>/...); the entry points at src/ itself compose them and have none. */
const concernOf = (file: string) => /^src\/([^/]+)\//.exec(file)?.[1];
/** The folder a file stands in, at any depth (src/console/ui apart from src/console; libs/x/src/schema apart from libs/x/src). */
const folderOf = (file: string) => file.slice(0, file.lastIndexOf('/'));

const files: Graph = new Map();
const libraries: Graph = new Map();
const concerns: Graph = new Map();
const folders: Graph = new Map();
for (const file of [...sources('libs'), ...sources('src')]) {
  const from = path(file);
  for (const to of importsOf(file)) {
    addEdge(files, from, to, `${from} imports ${to}`);
    const [a, b] = [libraryOf(from), libraryOf(to)];
    if (a && b && a !== b) addEdge(libraries, `libs/${a}`, `libs/${b}`, `${from} imports ${to}`);
    const [c, d] = [concernOf(from), concernOf(to)];
    if (c && d && c !== d) addEdge(concerns, `src/${c}`, `src/${d}`, `${from} imports ${to}`);
    const [e, f] = [folderOf(from), folderOf(to)];
    if (e !== f) addEdge(folders, e, f, `${from} imports ${to}`);
  }
}

describe('the import graph', () => {
  it('is read from every library', () => {
    for (const name of readdirSync(join(root, 'libs'))) expect(sources(`libs/${name}`).length).toBeGreaterThan(0);
    // The known one-way edges are seen, so an empty graph cannot pass for a clean one.
    expect(libraries.get('libs/steps')?.has('libs/git')).toBe(true);
    expect(libraries.get('libs/event-store')?.has('libs/events')).toBe(true);
  });

  it('has no loop among the libraries: a library never imports one that imports it, directly or round a loop', () => {
    expect(loops(libraries).map((loop) => inWords(libraries, loop))).toEqual([]);
  });

  it("has no loop among the service's module folders (src/<concern>): a concern never imports one that imports it", () => {
    expect(concerns.get('src/scaffolds')?.has('src/event-store')).toBe(true);
    expect(loops(concerns).map((loop) => inWords(concerns, loop))).toEqual([]);
  });

  it('has no loop among the folders of libs/ and src/, at any depth: a folder never imports one that imports it', () => {
    expect(folders.get('src/console/ui')?.has('src/common')).toBe(true);
    expect(loops(folders).map((loop) => inWords(folders, loop))).toEqual([]);
  });

  // Issue #50: a library is imported by its name, never by a path that climbs into it.
  it('imports another library by its name (#libs/<name>), never by a relative path', () => {
    const climbing: string[] = [];
    for (const folder of ['src', 'libs', 'test', 'bench', 'migrations'])
      for (const file of sources(folder, { specs: true })) {
        const own = libraryOf(path(file));
        for (const name of specifiersOf(file).filter((n) => n.startsWith('.'))) {
          const target = libraryOf(path(resolve(dirname(file), name)) + '/');
          if (target && target !== own) climbing.push(`${path(file)} imports ${name}`);
        }
      }
    expect(climbing).toEqual([]);
  });

  it('has no loop among the files of libs/ and src/', () => {
    expect(loops(files).map((loop) => inWords(files, loop))).toEqual([]);
  });

  it('has no library importing the service (src/)', () => {
    const upward = [...files].flatMap(([from, to]) =>
      from.startsWith('libs/')
        ? [...to.keys()].filter((t) => t.startsWith('src/')).map((t) => `${from} imports ${t}`)
        : [],
    );
    expect(upward).toEqual([]);
  });
});
