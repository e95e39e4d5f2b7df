import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { RunInputs } from '#libs/event-store';
import { RUN_INPUTS } from '../event-store/event-store.module';

/** The input under which a run's runner credential is recorded: its SHA-256 and its expiry, never the token. */
export const RUNNER_CREDENTIAL_INPUT = 'runner-credential';

/** A fresh runner token: 256 random bits, URL-safe. */
export const mintRunnerToken = (): string => randomBytes(32).toString('base64url');

const digestOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

interface RecordedCredential {
  sha256: string;
  expires_at: string;
}

function parseRecord(text: string | null): RecordedCredential | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Partial<RecordedCredential>;
    return typeof v.sha256 === 'string' && /^[0-9a-f]{64}$/.test(v.sha256) && typeof v.expires_at === 'string'
      ? { sha256: v.sha256, expires_at: v.expires_at }
      : null;
  } catch {
    return null;
  }
}

/**
 * One credential per run for its runner Job: the service mints it when it launches the Job, keeps only
 * its hash (on the inputs stream, which only the service writes) and checks a presented token against
 * that hash in constant time. A token is good for its own run only and until its expiry.
 */
@Injectable()
export class RunnerCredentials {
  constructor(@Inject(RUN_INPUTS) private readonly inputs: RunInputs) {}

  /** Records `token` as the run's credential (replacing any earlier one) until `expiresAt`. */
  async record(runId: string, token: string, expiresAt: Date): Promise<void> {
    const sha256 = digestOf(token).toString('hex');
    const current = parseRecord(await this.inputs.get(runId, RUNNER_CREDENTIAL_INPUT));
    if (current?.sha256 === sha256 && current.expires_at === expiresAt.toISOString()) return;
    await this.inputs.put(
      runId,
      RUNNER_CREDENTIAL_INPUT,
      JSON.stringify({ sha256, expires_at: expiresAt.toISOString() }),
    );
  }

  /** Whether a credential was ever recorded for the run: its Job was created before (the launcher records after creating it). */
  async issued(runId: string): Promise<boolean> {
    return parseRecord(await this.inputs.get(runId, RUNNER_CREDENTIAL_INPUT)) !== null;
  }

  /** Whether `presented` is the run's recorded credential and has not expired. */
  async accepts(runId: string, presented: string | undefined, now = new Date()): Promise<boolean> {
    if (!presented) return false;
    const recorded = parseRecord(await this.inputs.get(runId, RUNNER_CREDENTIAL_INPUT));
    if (!recorded || !(Date.parse(recorded.expires_at) > now.getTime())) return false;
    return timingSafeEqual(digestOf(presented), Buffer.from(recorded.sha256, 'hex'));
  }
}
