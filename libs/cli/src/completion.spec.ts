import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requiredTool } from '../../../test/support/tools';
import { completionOptions, completionScript, helpFromText, withHelp } from './completion';

describe('completion scripts', () => {
  const tricky = "the user's [optional] C:\\path value";
  const spec = {
    command: 'tool',
    options: completionOptions({ path: { type: 'string', hint: 'file', help: tricky }, json: { type: 'boolean' } }),
  } as const;

  it('quotes help texts for zsh and fish (quotes, brackets, backslashes)', () => {
    expect(completionScript('zsh', spec)).toContain(
      `'--path[the user'\\''s \\[optional\\] C:\\\\path value]:path:_files'`,
    );
    expect(completionScript('fish', spec)).toContain(`-l path -r -F -d 'the user\\'s [optional] C:\\\\path value'`);
  });

  it('writes scripts both shells parse with such help texts', () => {
    for (const [shell, check] of [
      ['zsh', ['-n']],
      ['fish', ['--no-execute']],
    ] as const) {
      const file = join(mkdtempSync(join(tmpdir(), 'gs-completion-')), `tool.${shell}`);
      writeFileSync(file, completionScript(shell, spec));
      const r = spawnSync(requiredTool(shell), [...check, file], { encoding: 'utf8' });
      expect([shell, r.status, r.stderr]).toEqual([shell, 0, '']);
    }
  });

  it('lets only plain words into a script (names, values, commands)', () => {
    expect(() => completionScript('bash', { command: 'tool;rm', options: [] })).toThrow(
      /"tool;rm" is not a plain word/,
    );
    expect(() =>
      completionScript('bash', { command: 'tool', options: [{ name: 'mode', value: ['a', '$(id)'] }] }),
    ).toThrow(/"\$\(id\)" is not a plain word/);
  });

  it('reads option descriptions from a hand-written help text', () => {
    const help = helpFromText(`Options:
  --repo DIR               working copy of the target git repository
  --var KEY=VALUE          a value of the new cluster's cluster-vars
                           (continued on the next line)
  -h, --help               this text
`);
    expect(help).toEqual({
      repo: 'working copy of the target git repository',
      var: "a value of the new cluster's cluster-vars",
      help: 'this text',
    });
    expect(withHelp({ repo: { type: 'string' } }, help)).toEqual({
      repo: { type: 'string', help: 'working copy of the target git repository' },
    });
  });
});
