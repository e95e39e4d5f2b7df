import { KubeConfig } from '@kubernetes/client-node';
import { KubeCredentialsSecrets, KubeTargetClusters } from '../../libs/kube/src';
import type { StepSettings } from '../../libs/steps/src';
import type { AppConfig } from '../config/config';

/** The management cluster: the kubeconfig file named by KUBECONFIG, else the in-cluster service account. */
export function managementKubeConfig(kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}

export function kubeTargets(settings: StepSettings, kubeconfigPath?: string): KubeTargetClusters {
  return new KubeTargetClusters(() => managementKubeConfig(kubeconfigPath), settings.sealedSecrets, {
    deadlineMs: settings.sealedSecretsDeadlineMs,
    initialDelayMs: settings.pollInitialMs,
    maxDelayMs: settings.pollMaxMs,
  });
}

/** What a runner in a Job reaches through its service account: the new cluster (through its kubeconfig Secret) and credentials Secrets. */
export function kubeReach(config: AppConfig) {
  return { targets: kubeTargets(config.steps, config.kubeconfigPath), credentials: new KubeCredentialsSecrets(() => managementKubeConfig(config.kubeconfigPath)) };
}
