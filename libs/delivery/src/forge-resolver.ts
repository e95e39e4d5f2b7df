/**
 * The forges' adapters behind the settings (forge-settings.ts): which adapter serves a repository, with its token
 * read at each call. Apart from the settings so that checking FORGE_* at start loads no forge client (the three
 * clients cost ~28 MiB and most of a second): only a process that delivers merge requests loads this file.
 */
import { readFileSync } from 'node:fs';
import { ForgeError, ForgeKind, ForgePort, ForgeResolver } from './forge-port';
import { ForgeConnection } from './http/forge-fetch';
import { GitHubForge } from './github/github-forge';
import { GitLabForge } from './gitlab/gitlab-forge';
import { GiteaForge } from './gitea/gitea-forge';
import { ForgeDefault, forgeEntryFor, ForgeSettings, repositoryPathOf } from './forge-settings';

/** The token in a file, read now (a mounted Secret may have been rotated). */
function readToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new ForgeError(`forge token file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (token === '') throw new ForgeError(`forge token file ${file} is empty`);
  return token;
}

/** The port for one kind of forge over one connection. */
export function createForgePort(kind: ForgeKind, connection: ForgeConnection): ForgePort {
  if (kind === 'github') return new GitHubForge(connection);
  if (kind === 'gitlab') return new GitLabForge(connection);
  return new GiteaForge(connection);
}

/**
 * The ForgeResolver of the settings: the longest matching prefix's forge, one adapter per entry. A request that
 * names another forge or API than the settings give for its repository is refused (ForgeError): the token is
 * for the API the settings name, and a request cannot send it elsewhere.
 */
export function createForgeResolver(
  settings: ForgeSettings,
  options: { log?: (line: string) => void } = {},
): ForgeResolver {
  const ports = new Map<ForgeDefault, ForgePort>();
  const portOf = (entry: ForgeDefault) => {
    if (!ports.has(entry))
      ports.set(
        entry,
        createForgePort(entry.forge, {
          apiUrl: entry.apiUrl,
          token: () => readToken(entry.tokenFile),
          caPem: settings.caPem,
          timeoutMs: settings.timeoutMs,
          log: options.log,
        }),
      );
    return ports.get(entry)!;
  };
  return {
    forgeFor(repoUrl, requested) {
      const entry = forgeEntryFor(settings, repoUrl, requested);
      if (!entry) return null;
      return {
        port: portOf(entry),
        repository: { apiUrl: entry.apiUrl, path: repositoryPathOf(entry.forge, repoUrl) },
        autoMerge: entry.autoMerge,
      };
    },
  };
}
