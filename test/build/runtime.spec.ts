import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pinned: string = pkg.devDependencies.node;
const NODE_IMAGE = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-bookworm-slim@sha256:[0-9a-f]{64}$/m;

describe('one Node everywhere: the pinned LTS of package.json', () => {
  it('is a supported LTS line, exact', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    // Even majors are the LTS lines; 26 is Active LTS from October 2026.
    expect(Number(pinned.split('.')[0]) % 2).toBe(0);
    expect(Number(pinned.split('.')[0])).toBeGreaterThanOrEqual(24);
    // No `engines` of the project's own: npm compares them with the Node npm runs on (the machine's),
    // which never runs the project, and warns EBADENGINE on each npx. `npm run node-version` checks.
    expect(pkg.engines).toBeUndefined();
  });

  it('runs these tests, and the programs they start by name', () => {
    expect(process.versions.node).toBe(pinned);
    expect(execFileSync('node', ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${pinned}`);
  });

  it.each(['Dockerfile', 'Dockerfile.runner'])('is the base of %s, pinned by digest, with tini as PID 1', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(text.match(NODE_IMAGE)?.[1]).toBe(pinned);
    expect(text.match(/^FROM /gm)?.length).toBe(text.match(/^FROM \$\{NODE_IMAGE\}/gm)?.length);
    expect(text).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(text).not.toMatch(/^COPY --from=build \/app\/dist dist$/m);
  });
});
