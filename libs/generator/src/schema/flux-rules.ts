/**
 * Flux's own field rules that the packaged schemas lose: they are generated from Flux's Go types,
 * where a duration is a metav1.Duration with a kubebuilder pattern the generator does not carry over.
 * Flux's CRDs declare every `interval`, `timeout` and `retryInterval` with this pattern, so the API
 * server refuses `interval: 50 minutes` when the Kustomization is applied.
 */
import type { FieldRule } from './strict-validate';

/** The pattern of metav1.Duration fields in Flux's CRDs. */
export const FLUX_DURATION = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;

const DURATION_FIELDS = new Set(['interval', 'timeout', 'retryInterval']);

export const isFluxApi = (apiVersion: string) => /^[a-z.]+\.(toolkit|extensions)\.fluxcd\.io\//.test(apiVersion);

export const fluxFieldRule: FieldRule = (key, value) =>
  DURATION_FIELDS.has(key) && !(typeof value === 'string' && FLUX_DURATION.test(value))
    ? 'must be a Go duration such as 30s, 10m or 1h30m'
    : null;
