/**
 * What every forge adapter does the same way: the port's flows (open or take the existing request, labels,
 * auto-merge; close only an open one; the newest of a branch's requests), the check that a repository is on
 * this adapter's API (its token is for that API only), and every client error turned into a ForgeError that
 * carries no token. A forge's adapter supplies the calls.
 */
import { ForgeError, ForgeKind, ForgePort, ForgeRepository, MergeRequest, MergeRequestSpec } from '../port/forge-port';
import { AuthHeader, ForgeConnection, ForgeFetch, forgeFetch, sameApi } from '../http/forge-fetch';
import { redact } from '../http/redact';

/** The forge's answers that mean "a request from this branch into that one is open already". */
const ALREADY_EXISTS = /already exists/i;
/** Statuses with which a forge declines auto-merge for this request (not mergeable, head moved, not allowed). */
const AUTO_MERGE_DECLINED = new Set([405, 406, 409, 422]);

export abstract class ForgeAdapter implements ForgePort {
  abstract readonly kind: ForgeKind;
  /** The fetch the client is given (the token is added there). */
  protected readonly fetch: ForgeFetch;
  private readonly log: (line: string) => void;

  protected constructor(
    kind: ForgeKind,
    protected readonly connection: ForgeConnection,
    auth: AuthHeader,
  ) {
    this.fetch = forgeFetch(kind, connection, auth);
    this.log = connection.log ?? (() => undefined);
  }

  /** Every request from `head` into `base`, in any state, all pages read. */
  protected abstract listRequests(path: string, head: string, base: string): Promise<MergeRequest[]>;
  /** Opens a request; its number. */
  protected abstract createRequest(spec: MergeRequestSpec): Promise<number>;
  protected abstract editRequest(spec: MergeRequestSpec, number: number): Promise<void>;
  /** Makes the request's labels exactly these (creating the ones the repository lacks where the forge needs that). */
  protected abstract setLabels(path: string, number: number, labels: readonly string[]): Promise<void>;
  protected abstract enableAutoMerge(spec: MergeRequestSpec, number: number): Promise<void>;
  protected abstract getRequest(path: string, number: number): Promise<MergeRequest>;
  protected abstract closeRequest(path: string, number: number): Promise<void>;

  async findMergeRequest(repository: ForgeRepository, head: string, base: string): Promise<MergeRequest | null> {
    this.ownRepository(repository);
    const all = await this.guard(() => this.listRequests(repository.path, head, base));
    return all.reduce<MergeRequest | null>((newest, r) => (newest && newest.number > r.number ? newest : r), null);
  }

  async openMergeRequest(spec: MergeRequestSpec): Promise<MergeRequest> {
    this.ownRepository(spec.repository);
    const number = await this.createOrExisting(spec);
    await this.guard(() => this.setLabels(spec.repository.path, number, spec.labels));
    if (spec.autoMerge) await this.askAutoMerge(spec, number);
    return this.readMergeRequest(spec.repository, number);
  }

  async updateMergeRequest(spec: MergeRequestSpec, number: number): Promise<MergeRequest> {
    this.ownRepository(spec.repository);
    await this.guard(() => this.editRequest(spec, number));
    await this.guard(() => this.setLabels(spec.repository.path, number, spec.labels));
    return this.readMergeRequest(spec.repository, number);
  }

  async readMergeRequest(repository: ForgeRepository, number: number): Promise<MergeRequest> {
    this.ownRepository(repository);
    return this.guard(() => this.getRequest(repository.path, number));
  }

  async closeMergeRequest(repository: ForgeRepository, number: number): Promise<void> {
    const current = await this.readMergeRequest(repository, number);
    if (current.state === 'open') await this.guard(() => this.closeRequest(repository.path, number));
  }

  /**
   * A new request, or the open one the forge says exists (GitHub 422, GitLab 409, Gitea 409): a step retried
   * after its request was opened gets that one, brought up to date, never a second.
   */
  private async createOrExisting(spec: MergeRequestSpec): Promise<number> {
    try {
      return await this.guard(() => this.createRequest(spec));
    } catch (e) {
      if (!(e instanceof ForgeError && (e.status === 409 || e.status === 422) && ALREADY_EXISTS.test(e.message)))
        throw e;
      const open = (await this.guard(() => this.listRequests(spec.repository.path, spec.head, spec.base))).filter(
        (r) => r.state === 'open',
      );
      if (open.length === 0) throw e;
      const number = Math.max(...open.map((r) => r.number));
      await this.guard(() => this.editRequest(spec, number));
      return number;
    }
  }

  /**
   * Auto-merge is a wish: a forge that declines it (the repository does not allow it, the request cannot be
   * merged now, its head moved) leaves the request open for a person, and the run waits for the merge as it
   * would without. The reason is logged; a failure of the forge itself (401, 429, 5xx) still fails the call.
   */
  private async askAutoMerge(spec: MergeRequestSpec, number: number): Promise<void> {
    try {
      await this.guard(() => this.enableAutoMerge(spec, number));
    } catch (e) {
      if (!(e instanceof ForgeError && e.status !== undefined && AUTO_MERGE_DECLINED.has(e.status))) throw e;
      this.log(`${this.kind} auto-merge of ${spec.repository.path} #${number} declined: ${e.message}`);
    }
  }

  /** A repository on another API would get this API's token: refused before any call. */
  private ownRepository(repository: ForgeRepository): void {
    if (!sameApi(repository.apiUrl, this.connection.apiUrl))
      throw new ForgeError(
        `${this.kind}: repository ${repository.path} is on ${repository.apiUrl}, not on this adapter's API ${this.connection.apiUrl}`,
      );
  }

  /**
   * One client call; whatever it throws becomes a ForgeError. The fetch's own ForgeError (status, wait) is
   * found where the client wrapped it (octokit's RequestError keeps it as `cause`); anything else keeps its
   * message only, cleaned of the token: a client's error object may hold the request's headers.
   */
  protected async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw this.asForgeError(e);
    }
  }

  protected asForgeError(e: unknown): ForgeError {
    for (let at: unknown = e, depth = 0; at && depth < 5; at = (at as { cause?: unknown }).cause, depth++)
      if (at instanceof ForgeError) return at;
    const message = e instanceof Error ? e.message : String(e);
    return new ForgeError(redact(`${this.kind}: ${message}`, this.connection.token()));
  }
}

/** owner/name of a GitHub or Gitea repository path, refused when it is not exactly that. */
export function ownerAndName(kind: ForgeKind, path: string): { owner: string; repo: string } {
  const parts = path.split('/');
  if (parts.length !== 2 || parts.some((p) => !/^[A-Za-z0-9._-]+$/.test(p) || p === '.' || p === '..'))
    throw new ForgeError(`${kind} repository path ${JSON.stringify(path)} is not owner/name`);
  return { owner: parts[0], repo: parts[1] };
}
