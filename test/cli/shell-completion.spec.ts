import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { completion as generatorCompletion } from '#libs/generator/cli';
import { completion as ctlCompletion } from '../../src/ctl';
import { completion as runnerCompletion } from '../../src/runner';
import { tempDir } from '../support/files';
import { requiredTool } from '../support/tools';

const SCRIPTS = {
  scaffolderctl: ctlCompletion,
  'generate-gitops-env': generatorCompletion,
  'scaffold-runner': runnerCompletion,
};

/**
 * What bash offers for a command line whose last word is being typed: the generated script is
 * sourced, COMP_WORDS/COMP_CWORD are set as bash's completion sets them, and its function is called.
 */
function bashCompletes(command: keyof typeof SCRIPTS, words: string[], cwd = process.cwd()): string[] {
  const dir = tempDir('completion');
  const script = join(dir, `${command}.bash`);
  writeFileSync(script, SCRIPTS[command]('bash'));
  const line = [command, ...words].map((w) => `'${w}'`).join(' ');
  const r = spawnSync(
    'bash',
    [
      '--norc',
      '-c',
      `source "$1"; complete -p ${command} >&2; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; ` +
        `$(complete -p ${command} | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p'); printf '%s\\n' "\${COMPREPLY[@]}"`,
      'bash',
      script,
    ],
    { encoding: 'utf8', cwd },
  );
  expect([r.status, r.stderr]).toEqual([0, `complete -F _${command.replace(/-/g, '_')} ${command}\n`]);
  return r.stdout.split('\n').filter(Boolean);
}

describe('shell completion from the option tables', () => {
  it('completes scaffolderctl commands, each command its own options, and option values in bash', () => {
    expect(bashCompletes('scaffolderctl', ['cr'])).toEqual(['create']);
    expect(bashCompletes('scaffolderctl', ['st'])).toEqual(['stream-info', 'status']);
    expect(bashCompletes('scaffolderctl', ['create', '--w'])).toEqual(['--wait']);
    expect(bashCompletes('scaffolderctl', ['status', '--'])).toEqual(['--stuck-minutes', '--json', '--help']);
    expect(bashCompletes('scaffolderctl', ['list', '--status', 'su'])).toEqual(['succeeded']);
    expect(bashCompletes('scaffolderctl', ['completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(bashCompletes('scaffolderctl', ['-'])).toEqual(['--help', '-h', '--version']);
    // -f is a file in create and a flag in logs: a file name follows the one, an option the other.
    const files = tempDir('completion-files');
    writeFileSync(join(files, 'request.json'), '{}');
    expect(bashCompletes('scaffolderctl', ['create', '-f', 'req'], files)).toEqual(['request.json']);
    expect(bashCompletes('scaffolderctl', ['logs', '-f', '--ur'], files)).toEqual(['--url']);
    // Options may come before the command: their values are not taken for it.
    expect(bashCompletes('scaffolderctl', ['--url', 'http://x', 'get', '--j'])).toEqual(['--json']);
  });

  it('completes the generator and the runner in bash', () => {
    expect(bashCompletes('generate-gitops-env', ['--infra-o'])).toEqual(['--infra-only']);
    expect(bashCompletes('generate-gitops-env', ['--secrets-backend', ''])).toEqual(['sealed-secrets', 'sops']);
    expect(bashCompletes('generate-gitops-env', ['--scope', 'n'])).toEqual(['namespace-wide']);
    expect(bashCompletes('generate-gitops-env', ['--cluster-name', ''])).toEqual([]);
    expect(bashCompletes('scaffold-runner', ['--'])).toEqual(['--run', '--help', '--version']);
  });

  it('refuses a shell it does not know', () => {
    expect(() => ctlCompletion('tcsh')).toThrow('completion needs a shell: bash, zsh, fish, not "tcsh"');
  });

  it('writes zsh scripts zsh parses, registered with compdef', () => {
    const zsh = requiredTool('zsh');
    for (const [command, script] of Object.entries(SCRIPTS)) {
      const text = script('zsh');
      const r = spawnSync(zsh, ['-n'], { input: text, encoding: 'utf8' });
      expect([command, r.status, r.stderr]).toEqual([command, 0, '']);
      expect(text).toMatch(new RegExp(`^#compdef ${command}\\n`));
      expect(text).toContain(`compdef _${command.replace(/-/g, '_')} ${command}`);
    }
    // Loaded the way a user loads it, into a zsh with compinit: the function is then the command's completer.
    const file = join(tempDir('zsh'), 'ctl.zsh');
    writeFileSync(file, SCRIPTS.scaffolderctl('zsh'));
    const loaded = spawnSync(
      zsh,
      ['-f', '-c', `autoload -Uz compinit && compinit -u -D && source ${file} && print -r -- $_comps[scaffolderctl]`],
      { encoding: 'utf8' },
    );
    expect([loaded.status, loaded.stdout]).toEqual([0, '_scaffolderctl\n']);
  });

  it('writes fish scripts fish parses, and fish completes from them', () => {
    const fish = requiredTool('fish');
    for (const [command, script] of Object.entries(SCRIPTS)) {
      const file = join(tempDir('fish'), `${command}.fish`);
      writeFileSync(file, script('fish'));
      const r = spawnSync(fish, ['--no-execute', file], { encoding: 'utf8' });
      expect([command, r.status, r.stderr]).toEqual([command, 0, '']);
    }
    const file = join(tempDir('fish'), 'ctl.fish');
    writeFileSync(file, SCRIPTS.scaffolderctl('fish'));
    const completions = (line: string) =>
      spawnSync(fish, ['--no-config', '-c', `source ${file}; complete -C '${line}'`], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean);
    const offered = (line: string) => completions(line).map((l) => l.split('\t')[0]);
    expect(offered('scaffolderctl cre')).toEqual(['create']);
    expect(offered('scaffolderctl list --status fa')).toEqual(['failed']);
    // With the option's help beside it, quotes and all.
    expect(completions('scaffolderctl create --wa')).toEqual([
      "--wait\tprint the run's events as they happen until it ends",
    ]);
  });
});
