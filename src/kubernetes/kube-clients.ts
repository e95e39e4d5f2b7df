import { KubeConfig } from '#libs/kube';

/** The management cluster: the kubeconfig file named by KUBECONFIG, else the in-cluster service account. */
export function managementKubeConfig(kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}
