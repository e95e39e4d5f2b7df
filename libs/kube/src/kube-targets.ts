import type { KubeConfig } from './kube-config';
import type { KubeconfigRef, TargetClusters } from '#libs/steps/handler/ports';
import {
  fetchSealingCertificate,
  SealedSecretsLocation,
  targetKubeConfig,
  waitForSealedSecrets,
} from './target-cluster';

/** TargetClusters over the Kubernetes API: the kubeconfig Secret is read anew at every use and kept nowhere. */
export class KubeTargetClusters implements TargetClusters {
  constructor(
    private readonly management: () => KubeConfig,
    private readonly location: SealedSecretsLocation,
    private readonly wait: { deadlineMs: number; initialDelayMs: number; maxDelayMs: number },
  ) {}

  async waitForSealedSecrets(ref: KubeconfigRef, onPoll: (seen: string, waitedMs: number) => Promise<void>) {
    const kc = await targetKubeConfig(this.management(), ref);
    const name = await waitForSealedSecrets(kc, this.location, {
      ...this.wait,
      onPoll: (check, waited) => onPoll(check.seen, waited),
    });
    return { namespace: this.location.namespace, name };
  }

  async fetchCertificate(ref: KubeconfigRef, controller: { namespace: string; name: string }) {
    const kc = await targetKubeConfig(this.management(), ref);
    return fetchSealingCertificate(kc, controller.namespace, controller.name);
  }
}
