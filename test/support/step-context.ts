import { InMemoryRunInputs, InMemoryRunLogStore } from '#libs/event-store';
import type { EventDraft, ScaffoldRequestedData, ScaffoldTarget } from '#libs/events';
import type { GenerateResult, TreeGenerator } from '#libs/generator';
import type { GitWorkspace, GitWorkspaces } from '#libs/git';
import { Command, fold } from '#libs/run-decider';
import { RunLog, StepContext, StepSettings, TargetClusters } from '#libs/steps';
import { SCAFFOLD_REQUEST } from './run-fixtures';

/**
 * A step handler's context for its unit spec (libs/steps/src/steps/<step>/handler.spec.ts): the run folded from
 * `given` events, in-memory inputs and log, and test doubles where the handler reaches out. Nothing is cloned or
 * generated unless the spec says what a working copy finds.
 */
export interface StepContextDouble {
  ctx: StepContext;
  inputs: InMemoryRunInputs;
  logs: InMemoryRunLogStore;
  /** The commands the handler put to the run (its progress reports). */
  commands: Command[];
  /** What happened to working copies: clone, handOver, takeOver, remove, in order. */
  workspaceCalls: string[];
}

export interface StepContextOptions {
  target?: ScaffoldTarget;
  request?: Partial<ScaffoldRequestedData>;
  /** The run's events after its ScaffoldRequested. */
  given?: EventDraft[];
  targets?: TargetClusters;
  /** The commit of this run's pass that a working copy finds already on the branch (a redelivery after a push). */
  alreadyPushed?: string;
  /** The infra pass's working copy, kept for the full pass. */
  handedOver?: boolean;
}

const at = (drafts: EventDraft[]) => drafts.map((d) => ({ ...d, time: '2026-01-01T00:00:00.000Z' }));

export function stepContext(options: StepContextOptions = {}): StepContextDouble {
  const runId = 'run-1';
  const request: ScaffoldRequestedData = {
    ...SCAFFOLD_REQUEST,
    ...options.request,
    ...(options.target ? { target: options.target } : {}),
  };
  const inputs = new InMemoryRunInputs();
  const logs = new InMemoryRunLogStore();
  const commands: Command[] = [];
  const workspaceCalls: string[] = [];
  const workspace = (how: string): GitWorkspace =>
    ({
      dir: `/work/${how}`,
      repo: { url: request.repo_url, branch: request.branch },
      findRunCommit: async () => options.alreadyPushed ?? null,
      remove: async () => void workspaceCalls.push(`remove ${how}`),
    }) as unknown as GitWorkspace;
  const workspaces = {
    clone: async () => (workspaceCalls.push('clone'), workspace('clone')),
    takeOver: async () => (workspaceCalls.push('takeOver'), options.handedOver ? workspace('handed-over') : null),
    handOver: async (_key: string, ws: GitWorkspace) => void workspaceCalls.push(`handOver ${ws.dir}`),
    withScratchClone: () => Promise.reject(new Error('no scratch clone expected')),
    withoutLocalPaths: (text: string) => text,
  } as GitWorkspaces;
  /** Generates until the search for the pass's commit stops it (these specs never generate a tree). */
  const generator = {
    generate: (_options: unknown, signal?: AbortSignal) =>
      new Promise<GenerateResult>((_, reject) =>
        signal?.addEventListener('abort', () => reject(new Error('generation stopped'))),
      ),
  } as TreeGenerator;
  const ctx: StepContext = {
    runId,
    state: fold(at([{ type: 'ScaffoldRequested', data: request }, ...(options.given ?? [])])),
    commands: {
      handle: async (_runId, command) => {
        commands.push(command);
        return { appended: [], history: [], state: fold([]) } as never;
      },
    },
    inputs,
    settings: { workDir: '/work', sealedSecretsDeadlineMs: 1_200_000, referenceEnv: 'dev' } as StepSettings,
    log: new RunLog(logs, runId, 'test'),
    generator,
    workspaces,
    targets: options.targets,
  };
  return { ctx, inputs, logs, commands, workspaceCalls };
}

/** The run's log lines, as its log store keeps them. */
export async function logLines(double: StepContextDouble): Promise<string[]> {
  return (await double.logs.read(double.ctx.runId)).map((e) => e.msg);
}
