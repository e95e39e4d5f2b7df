import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GEN_NAMES_OF_CONFIG, slimGenUrl } from './kube-config';

const DIST = dirname(require.resolve('@kubernetes/client-node/dist/config.js'));
const CONFIG_SOURCE = readFileSync(join(DIST, 'config.js'), 'utf8');

describe('KubeConfig without the generated client: what config.js imports from ./gen/index.js', () => {
  it('is every name config.js imports from there, each exported by the file it is taken from', () => {
    // Every import of ./gen/index.js in config.js, whatever its form (a namespace or default import fails below).
    const statements = CONFIG_SOURCE.match(/import[^;]*?from\s*['"]\.\/gen\/index\.js['"]/g) ?? [];
    expect(statements.length).toBeGreaterThan(0);
    const names = statements.flatMap((statement) => {
      const named = /^import\s*\{([^}]*)\}\s*from/.exec(statement);
      if (!named)
        throw new Error(`config.js imports ./gen/index.js in a form the slim module cannot serve: ${statement}`);
      return named[1]
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
        .map((n) => n.split(/\s+as\s+/)[0]);
    });
    expect(names.sort()).toEqual(Object.keys(GEN_NAMES_OF_CONFIG).sort());
    for (const [name, file] of Object.entries(GEN_NAMES_OF_CONFIG))
      expect(require(join(DIST, 'gen', file))[name]).toBeDefined();
  });

  it('is served to config.js as a module of absolute imports of those files', () => {
    const configUrl = `file://${join(DIST, 'config.js')}`;
    const source = decodeURIComponent(slimGenUrl(configUrl).replace(/^data:text\/javascript,/, ''));
    expect(source.split('\n')).toEqual(
      Object.entries(GEN_NAMES_OF_CONFIG).map(
        ([name, file]) => `export { ${name} } from ${JSON.stringify(`file://${join(DIST, 'gen', file)}`)};`,
      ),
    );
  });
});
