import type { KubeConfig } from './kube-config';
import { GeneratorInputError, parseSuppliedCredentials, SuppliedCredentials } from '#libs/generator';
import type { CredentialsSecretRef, SuppliedCredentialsSource } from '#libs/steps/handler/ports';
import { KubeError } from './errors';
import { readInputSecret } from './input-secret';

/** The key of a credentials Secret that holds the document. */
export const CREDENTIALS_KEY = 'credentials.yaml';

/**
 * Supplied credentials from a Secret of the management cluster (key credentials.yaml, the same
 * document as the generator's --credentials file), read at every use and kept nowhere, and only when it
 * is labelled as an input (see readInputSecret). Errors name the Secret and the keys, never a value.
 */
export class KubeCredentialsSecrets implements SuppliedCredentialsSource {
  constructor(private readonly management: () => KubeConfig) {}

  async read(ref: CredentialsSecretRef): Promise<SuppliedCredentials> {
    const where = `credentials Secret ${ref.namespace}/${ref.name}`;
    const secret = await readInputSecret(this.management(), ref, 'credentials');
    const encoded = secret.data?.[CREDENTIALS_KEY];
    if (!encoded) throw new KubeError(`${where} has no key "${CREDENTIALS_KEY}"`, false);
    try {
      return parseSuppliedCredentials(
        Buffer.from(encoded, 'base64').toString('utf8'),
        `${where} key ${CREDENTIALS_KEY}`,
      );
    } catch (e) {
      if (e instanceof GeneratorInputError) throw new KubeError(e.message, false);
      throw e;
    }
  }
}
