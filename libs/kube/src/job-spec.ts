import type { V1Job } from '@kubernetes/client-node';

/** The runner image (scaffold-runner + generate-gitops-env), pinned to an exact tag; override with RUNNER_IMAGE. */
export const RUNNER_IMAGE = 'ghcr.io/kubeopera/gitops-scaffolder-runner:0.1.0';

/** Where the git Secret is mounted; the runner reads it as GIT_CREDENTIALS_DIR. */
export const GIT_SECRET_MOUNT = '/var/run/secrets/git';
/** Where the run's runner credential (the Secret scaffold-<id>-runner, key `token`) is mounted. */
export const RUNNER_CREDENTIAL_MOUNT = '/var/run/secrets/scaffolder';
export const RUNNER_TOKEN_KEY = 'token';
export const RUN_ID_LABEL = 'gitops-scaffolder.io/run-id';
export const MANAGED_BY = {
  'app.kubernetes.io/managed-by': 'gitops-scaffolder',
  'app.kubernetes.io/component': 'scaffold-runner',
};

export interface JobSettings {
  namespace: string;
  image: string;
  serviceAccountName: string;
  /** ConfigMap with the non-secret settings (git, reference, log level, ...), as envFrom. */
  configMapName: string;
  /** Secrets given to the runner as envFrom (registry credentials): references only. */
  envSecretNames: string[];
  /** Secret with git credentials, mounted read-only at /var/run/secrets/git. */
  gitSecretName?: string;
  /** The service's URL as Jobs reach it: the runner reads and reports its run there (it has no NATS login). */
  serviceUrl: string;
  /** Pull secrets (in the Jobs' namespace) for a runner image in a private registry. */
  imagePullSecretNames?: string[];
  backoffLimit: number;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished: number;
}

export const jobNameFor = (runId: string) => `scaffold-${runId}`;
/** The run's runner credential: created with the Job, owned by it, so it goes when the Job goes. */
export const runnerSecretNameFor = (runId: string) => `scaffold-${runId}-runner`;

/** The Job that runs one scaffold: plain data, no I/O, so it can be tested and reviewed as a manifest. */
export function scaffoldJob(runId: string, s: JobSettings): V1Job {
  const labels = { ...MANAGED_BY, [RUN_ID_LABEL]: runId };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: jobNameFor(runId), namespace: s.namespace, labels },
    spec: {
      backoffLimit: s.backoffLimit,
      activeDeadlineSeconds: s.activeDeadlineSeconds,
      ttlSecondsAfterFinished: s.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: s.serviceAccountName,
          automountServiceAccountToken: true,
          ...(s.imagePullSecretNames?.length
            ? { imagePullSecrets: s.imagePullSecretNames.map((name) => ({ name })) }
            : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 10001,
            runAsGroup: 10001,
            fsGroup: 10001,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'runner',
              image: s.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['scaffold-runner'],
              args: ['--run', runId],
              env: [
                { name: 'RUN_ID', value: runId },
                { name: 'WORK_DIR', value: '/work' },
                // git wants a writable HOME; the root filesystem is read-only.
                { name: 'HOME', value: '/tmp' },
                { name: 'SCAFFOLDER_URL', value: s.serviceUrl },
                { name: 'RUNNER_TOKEN_FILE', value: `${RUNNER_CREDENTIAL_MOUNT}/${RUNNER_TOKEN_KEY}` },
                ...(s.gitSecretName ? [{ name: 'GIT_CREDENTIALS_DIR', value: GIT_SECRET_MOUNT }] : []),
              ],
              envFrom: [
                { configMapRef: { name: s.configMapName } },
                ...s.envSecretNames.map((name) => ({ secretRef: { name } })),
              ],
              resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'work', mountPath: '/work' },
                { name: 'tmp', mountPath: '/tmp' },
                ...(s.gitSecretName ? [{ name: 'git-credentials', mountPath: GIT_SECRET_MOUNT, readOnly: true }] : []),
                { name: 'runner-credential', mountPath: RUNNER_CREDENTIAL_MOUNT, readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: 'work', emptyDir: { sizeLimit: '2Gi' } },
            { name: 'tmp', emptyDir: {} },
            ...(s.gitSecretName
              ? [{ name: 'git-credentials', secret: { secretName: s.gitSecretName, defaultMode: 0o400 } }]
              : []),
            {
              name: 'runner-credential',
              secret: { secretName: runnerSecretNameFor(runId), defaultMode: 0o400 },
            },
          ],
        },
      },
    },
  };
}
