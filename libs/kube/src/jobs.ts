import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { kubeError, KubeError } from './errors';
import { KubeApi, Wire } from './kube-api';
import type { KubeConfig } from './kube-config';
import {
  jobNameFor,
  JobSettings,
  MANAGED_BY,
  RUN_ID_LABEL,
  RUNNER_TOKEN_KEY,
  runnerSecretNameFor,
  scaffoldJob,
} from './job-spec';

/** A Job as the API server answers it. */
export type KubeJob = Wire<V1Job>;

export type JobOutcome = { state: 'active' | 'succeeded' } | { state: 'failed'; reason: string } | { state: 'missing' };

const selectorFor = (runId: string) => `${RUN_ID_LABEL}=${runId}`;
/** The label selector of every Job this service manages. */
const MANAGED_SELECTOR = Object.entries(MANAGED_BY)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');

/** Run ids named in one list request's label selector: about 2 KiB of URL, far below what API servers accept. */
export const OUTCOMES_PER_LIST = 50;

/** What a Job's conditions say of its run's steps. */
function outcomeOf(job: KubeJob): JobOutcome {
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed)
    return {
      state: 'failed',
      reason: `Job condition Failed: ${failed.reason ?? 'unknown'}${failed.message ? ` (${failed.message})` : ''}`,
    };
  if (job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) return { state: 'succeeded' };
  return { state: 'active' };
}

/** Jobs in the provisioning namespace of the management cluster: create (idempotent), inspect, read logs. */
export class ScaffoldJobs {
  private readonly api: KubeApi;

  constructor(
    kc: KubeConfig,
    readonly settings: JobSettings,
  ) {
    this.api = new KubeApi(kc);
  }

  /** Creates the run's Job; an existing Job of the same run (a redelivered event, another replica) is adopted. */
  async ensureJob(runId: string): Promise<{ job: KubeJob; adopted: boolean }> {
    const ns = this.settings.namespace;
    try {
      return { job: await this.api.create('jobs', ns, scaffoldJob(runId, this.settings)), adopted: false };
    } catch (e) {
      const err = kubeError(e, `creating Job ${ns}/${jobNameFor(runId)}`);
      if (err.status !== 409) throw err;
      const existing = await this.api.read('jobs', ns, jobNameFor(runId)).catch((e2) => {
        throw kubeError(e2, `reading Job ${ns}/${jobNameFor(runId)}`);
      });
      if (existing.metadata?.labels?.[RUN_ID_LABEL] !== runId)
        throw new KubeError(`Job ${ns}/${jobNameFor(runId)} exists but belongs to another run`, false);
      return { job: existing, adopted: true };
    }
  }

  /**
   * The run's runner credential Secret, owned by its Job (garbage-collected with it): created with
   * `token` when there is none, else the token it already holds (a relaunch, another replica) is kept,
   * so a running pod's credential never changes under it. Returns the token the Secret holds.
   */
  async ensureRunnerSecret(runId: string, job: KubeJob, token: string): Promise<string> {
    const ns = this.settings.namespace;
    const name = runnerSecretNameFor(runId);
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata!.name!, uid: job.metadata!.uid! };
    try {
      await this.api.create('secrets', ns, {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name,
          namespace: ns,
          labels: { ...MANAGED_BY, [RUN_ID_LABEL]: runId },
          // No blockOwnerDeletion: it would need update on jobs/finalizers where OwnerReferencesPermissionEnforcement
          // is on, and the garbage collector deletes the Secret with its Job without it.
          ownerReferences: [{ ...owner, controller: true }],
        },
        stringData: { [RUNNER_TOKEN_KEY]: token },
      });
      return token;
    } catch (e) {
      const err = kubeError(e, `creating Secret ${ns}/${name}`);
      if (err.status !== 409) throw err;
    }
    const existing = await this.api.read('secrets', ns, name).catch((e) => {
      throw kubeError(e, `reading Secret ${ns}/${name}`);
    });
    const held = existing.data?.[RUNNER_TOKEN_KEY];
    // Only the Secret this Job owns: one planted under the name (or left by a deleted Job) is not adopted.
    const owned = existing.metadata?.ownerReferences?.some((o) => o.uid === owner.uid);
    if (existing.metadata?.labels?.[RUN_ID_LABEL] !== runId || !owned || !held)
      throw new KubeError(`Secret ${ns}/${name} exists but is not this run's runner credential`, false);
    return Buffer.from(held, 'base64').toString('utf8');
  }

  async outcome(runId: string): Promise<JobOutcome> {
    let job: KubeJob;
    try {
      job = await this.api.read('jobs', this.settings.namespace, jobNameFor(runId));
    } catch (e) {
      const err = kubeError(e, `Job ${jobNameFor(runId)}`);
      if (err.status === 404) return { state: 'missing' };
      throw err;
    }
    return outcomeOf(job);
  }

  /**
   * The outcome of each run's Job, read with one list request per OUTCOMES_PER_LIST runs (a label selector naming
   * them) instead of one request per run: a watch over hundreds of active runs costs the API server, and this
   * process, a request or two per interval. A run without its Job (by name and run label) is `missing`.
   */
  async outcomes(runIds: readonly string[]): Promise<Map<string, JobOutcome>> {
    const found = new Map<string, JobOutcome>(runIds.map((id) => [id, { state: 'missing' }]));
    for (let i = 0; i < runIds.length; i += OUTCOMES_PER_LIST) {
      const chunk = runIds.slice(i, i + OUTCOMES_PER_LIST);
      const jobs = await this.api
        .list('jobs', this.settings.namespace, `${MANAGED_SELECTOR},${RUN_ID_LABEL} in (${chunk.join(',')})`)
        .catch((e) => {
          throw kubeError(e, 'listing Jobs');
        });
      for (const job of jobs) {
        const runId = job.metadata?.labels?.[RUN_ID_LABEL];
        // The Job of the run's name only, as outcome() reads it: a labelled Job under another name is not its Job.
        if (runId && found.has(runId) && job.metadata?.name === jobNameFor(runId)) found.set(runId, outcomeOf(job));
      }
    }
    return found;
  }

  /** Runs that have a Job managed by this service, by run id. */
  async listRunIds(): Promise<string[]> {
    const jobs = await this.api.list('jobs', this.settings.namespace, MANAGED_SELECTOR).catch((e) => {
      throw kubeError(e, 'listing Jobs');
    });
    return jobs.map((j) => j.metadata?.labels?.[RUN_ID_LABEL]).filter((id): id is string => Boolean(id));
  }

  /** The pods of the run's Job, oldest first (creationTimestamp is RFC 3339 in UTC, so its text sorts by time). */
  async pods(runId: string): Promise<Wire<V1Pod>[]> {
    const pods = await this.api.list('pods', this.settings.namespace, selectorFor(runId)).catch((e) => {
      throw kubeError(e, `listing pods of ${jobNameFor(runId)}`);
    });
    return pods.sort((a, b) =>
      String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')),
    );
  }

  /**
   * Every container's log of every pod of the run's Job (each pod is one attempt), including the
   * previous instance of a restarted container. `tailLines` limits each log.
   */
  async logs(runId: string, tailLines?: number): Promise<string> {
    const sections: string[] = [];
    for (const pod of await this.pods(runId)) {
      const name = pod.metadata!.name!;
      for (const c of pod.spec?.containers ?? []) {
        for (const previous of (pod.status?.containerStatuses?.find((s) => s.name === c.name)?.restartCount ?? 0) > 0
          ? [true, false]
          : [false]) {
          try {
            const text = await this.api.podLog(this.settings.namespace, name, {
              container: c.name,
              previous,
              tailLines,
            });
            sections.push(`--- pod ${name} container ${c.name}${previous ? ' (previous)' : ''} ---\n${text}`);
          } catch (e) {
            sections.push(
              `--- pod ${name} container ${c.name}${previous ? ' (previous)' : ''}: ${kubeError(e, 'log').message} ---\n`,
            );
          }
        }
      }
    }
    return sections.join('');
  }
}
