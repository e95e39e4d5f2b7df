import { KubeConfig } from '@kubernetes/client-node';
import { KubeTargetClusters } from '../../libs/kube/src';
import type { StepSettings } from '../../libs/steps/src';

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
