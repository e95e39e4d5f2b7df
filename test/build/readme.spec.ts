/** What the README says about the suite and its set-up, held to what the checkout does. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const README = readFileSync(join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('the README', () => {
  it("states no count of the suite's tests or files, which the next test makes wrong", () => {
    // A count that dates a measurement ("963 tests then") stays true; one that describes the suite does not.
    const counts = [...README.matchAll(/\b\d[\d,]* (?:tests|test files|spec files|files)\b(?! then)[^.]*/g)]
      .map((m) => m[0])
      .filter((text) => /\b(tests?|suite|spec)\b/.test(text));
    expect(counts).toEqual([]);
  });

  it('test command sets up what the suite needs first', () => {
    expect(README).toMatch(/^npm test {2,}# sets up what the suite needs/m);
    expect(pkg.scripts.pretest).toBe('bash scripts/test-setup.sh');
  });

  it('installs the packages only through scripts/npm-ci.sh (npm ci on the pinned Node, no EBADENGINE)', () => {
    const commands = [...README.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
      .flatMap((m) => m[1].split('\n'))
      .map((line) => line.replace(/\s#.*$/, '')); // the comments beside them aside
    expect(commands.filter((command) => /\bnpm (?:ci|install|i)\b/.test(command))).toEqual([]);
  });
});
