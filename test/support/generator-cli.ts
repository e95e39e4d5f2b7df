import { main } from '#libs/generator/commands/main';

/**
 * Registry settings for the command line's passes, from the environment as a user gives them: the infra pass reads
 * them too, as it rehearses the full pass, whose pull secrets need them. A test's own settings go over these.
 */
export const CLI_REGISTRY_ENV = {
  REGISTRY_SERVER: 'registry.example.com',
  REGISTRY_USERNAME: 'puller',
  REGISTRY_PASSWORD: 'RegistryPassword-1',
};

/** Runs `generate-gitops-env` in this process (with `env` beside PATH): its exit code and what it printed. */
export async function generatorCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((s) => out.push(String(s)) > 0);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((s) => err.push(String(s)) > 0);
  try {
    const code = await main(args, { PATH: process.env.PATH, ...env });
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}
