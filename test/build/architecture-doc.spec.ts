/** docs/architecture.md held to the service's modules: each Nest module of src/ is named there. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const ARCHITECTURE = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

/** The class each `@Module(...)` of src/ decorates, read from the text: the decorator, then the next exported class. */
function nestModules(): string[] {
  return readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .flatMap((f) => {
      const text = readFileSync(join(root, 'src', f), 'utf8');
      return [...text.matchAll(/^@Module\([\s\S]*?^export class (\w+)/gm)].map((m) => m[1]);
    })
    .sort();
}

describe('docs/architecture.md', () => {
  it('names every Nest module of src/', () => {
    const modules = nestModules();
    expect(modules).toContain('ServiceModule');
    expect(modules.filter((name) => !new RegExp(`\\b${name}\\b`).test(ARCHITECTURE))).toEqual([]);
  });
});
