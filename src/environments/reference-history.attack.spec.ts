/**
 * The reference history's reads under a large listing: one listing of many environments that share a
 * recorded commit (the usual case: most were made from the same reference commit) must not start a git process
 * per environment. EnvironmentQueries.list asks `behind` for every environment of a page at once (Promise.all,
 * up to limit=500), and the distance is cached only once a read has finished, so concurrent asks all miss.
 */
import type { AsyncGitRunner } from '#libs/generator/reference-git';
import { GitReferenceHistory } from './reference-history';

describe('GitReferenceHistory, attacked', () => {
  it('reads one distance once, however many environments ask for it at the same time', async () => {
    let processes = 0;
    const git: AsyncGitRunner = {
      run: async (_dir, args) => {
        processes += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return args[0] === 'rev-list' ? '3\n' : '';
      },
    };
    const history = new GitReferenceHistory('/reference', git);
    const [from, tip] = ['1'.repeat(40), '2'.repeat(40)];
    const distances = await Promise.all(Array.from({ length: 500 }, () => history.behind(from, tip)));
    expect(new Set(distances)).toEqual(new Set([3]));
    // merge-base --is-ancestor and rev-list --count: two processes, not a thousand.
    expect(processes).toBeLessThanOrEqual(2);
  });
});
