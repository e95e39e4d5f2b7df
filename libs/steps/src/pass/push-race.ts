import { GitStepError, GitWorkspace } from '#libs/git';
import type { Pass } from '#libs/generator';
import { crashPoint } from '../handler/crash-points';
import type { StepContext } from '../handler/step-handler';

/**
 * One pass's pushes into a branch other runs push to at the same time (many clusters scaffolded into
 * one fleet repository is the normal case). The remote decides who lands first; the others fetch,
 * rebase their commit on the new head (their folders are their own, so nothing is generated again)
 * and push again after a jittered, growing pause, until PUSH_DEADLINE_SECONDS after the clone.
 */
export class PushRace {
  private readonly deadline: number;
  private attempts = 0;

  constructor(
    private readonly ctx: StepContext,
    private readonly ws: GitWorkspace,
    private readonly pass: Pass,
  ) {
    this.deadline = Date.now() + ctx.settings.pushDeadlineMs;
  }

  /** Pushes `commit` (the working copy's head), rebased onto the branch's new head as often as the race needs. */
  async pushUntilLanded(
    commit: string,
  ): Promise<{ kind: 'pushed' | 'already'; commit: string } | { kind: 'conflict' }> {
    for (;;) {
      this.attempts++;
      try {
        await this.ws.push();
        crashPoint(`after-push:${this.pass}`);
        await this.ctx.log.line(`pushed ${commit} to ${this.ws.repo.branch}`);
        return { kind: 'pushed', commit };
      } catch (e) {
        if (!this.mayTryAgain(e)) throw e;
        await this.pause(e as Error);
      }
      await this.ws.fetch();
      // A duplicate delivery of this step may be the writer that moved the branch.
      const theirs = await this.ws.findRunCommit(this.ctx.runId, this.pass, 'remote');
      if (theirs) return { kind: 'already', commit: theirs };
      if (!(await this.ws.rebaseOnRemote())) return { kind: 'conflict' };
      commit = await this.ws.head();
    }
  }

  /** Only a push rejected because the branch moved is this race's to retry; anything else is the step's. */
  private mayTryAgain(e: unknown): boolean {
    const rejected = e instanceof GitStepError && e.message.startsWith('push rejected');
    return rejected && this.attempts < this.ctx.settings.pushAttempts && Date.now() < this.deadline;
  }

  private async pause(e: Error): Promise<void> {
    // Full jitter: racers spread out instead of colliding again in step.
    const pauseMs = Math.min(
      this.deadline - Date.now(),
      Math.random() * Math.min(2000, 50 * 2 ** Math.min(this.attempts, 10)),
    );
    await this.ctx.log.line(
      `push rejected (${e.message}); rebasing onto the new head and pushing again in ${Math.round(pauseMs)} ms (attempt ${this.attempts + 1})`,
      'warn',
    );
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}
