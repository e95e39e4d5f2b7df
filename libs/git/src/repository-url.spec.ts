import { fluxUrlOf, hasCredentials, sameRepository, withoutCredentials } from './repository-url';

describe('repository URLs', () => {
  it.each([
    ['https://github.com/acme/fleet.git', 'git@github.com:acme/fleet.git'],
    ['https://GitHub.com/acme/fleet', 'ssh://git@github.com:22/acme/fleet.git'],
    ['https://git.example.org/acme/fleet.git/', 'https://git.example.org:443/acme/fleet'],
    ['/srv/git/fleet.git', 'file:///srv/git/fleet.git'],
    // One host however it is written: git (curl, ssh) reaches the same server through each form.
    ['https://127.0.0.1:8443/acme/fleet.git', 'https://[::ffff:127.0.0.1]:8443/acme/fleet.git'],
    ['http://10.0.0.7/acme/fleet', 'http://[::FFFF:a00:7]/acme/fleet'],
    ['ssh://git@10.0.0.7/acme/fleet', 'ssh://git@[::ffff:10.0.0.7]/acme/fleet'],
    ['ssh://git@127.0.0.1/acme/fleet', 'ssh://git@127.1/acme/fleet'],
    ['https://git.example.org/acme/fleet', 'https://git.example.org./acme/fleet'],
    ['git@git.example.org:acme/fleet.git', 'ssh://git@Git.Example.Org./acme/fleet'],
  ])('%s and %s are one repository', (a, b) => {
    expect(sameRepository(a, b)).toBe(true);
  });

  it.each([
    ['https://github.com/acme/fleet.git', 'https://github.com/acme/fleet-staging.git'],
    ['https://github.com/acme/fleet.git', 'https://gitlab.com/acme/fleet.git'],
    ['https://github.com/acme/Fleet.git', 'https://github.com/acme/fleet.git'],
    ['not a url', 'not a url'],
  ])('%s and %s are not', (a, b) => {
    expect(sameRepository(a, b)).toBe(false);
  });

  it('gives Flux an ssh:// URL for a scp-like one, other URLs unchanged', () => {
    expect(fluxUrlOf('git@github.com:acme/fleet.git')).toBe('ssh://git@github.com/acme/fleet.git');
    expect(fluxUrlOf('https://github.com/acme/fleet.git')).toBe('https://github.com/acme/fleet.git');
  });

  it('sees credentials in a password, or in user information outside ssh', () => {
    expect(hasCredentials('https://bot:token@github.com/acme/fleet.git')).toBe(true);
    expect(hasCredentials('https://ghp_token@github.com/acme/fleet.git')).toBe(true);
    expect(hasCredentials('ssh://git:secret@github.com/acme/fleet.git')).toBe(true);
    expect(hasCredentials('ssh://git@github.com/acme/fleet.git')).toBe(false);
    expect(hasCredentials('git@github.com:acme/fleet.git')).toBe(false);
    expect(hasCredentials('https://github.com/acme/fleet.git')).toBe(false);
  });
});

describe('withoutCredentials', () => {
  it.each([
    ['https://user:Secret123@git.example.com/x.git', 'https://***@git.example.com/x.git'],
    ['https://ghpToken@git.example.com:8443/x.git?a=1', 'https://***@git.example.com:8443/x.git?***'],
    ['https://git.example.com/x.git?private_token=glpat-secret', 'https://git.example.com/x.git?***'],
    ['ssh://git@git.example.com/x.git#token', 'ssh://git@git.example.com/x.git?***'],
    ['https://[::1]:8443/x.git', 'https://[::1]:8443/x.git'],
    ['https://git.example.com/x.git', 'https://git.example.com/x.git'],
    ['ssh://git@git.example.com/x.git', 'ssh://git@git.example.com/x.git'],
    ['git@git.example.com:x.git', 'git@git.example.com:x.git'],
  ])('%s -> %s', (url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });
});
