import type { NatsConnection } from '@nats-io/nats-core';
import {
  DiscardPolicy,
  JetStreamApiError,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  StreamConfig,
  StreamInfo,
} from '@nats-io/jetstream';
import { DEFAULT_STREAMS, StreamNames } from './streams';

const STREAM_NOT_FOUND = 10059;
const MIN_SERVER = [2, 9, 0];
const SECONDS = 1e9;

export function serverAtLeast(version: string, min: number[] = MIN_SERVER): boolean {
  const parts = version.split(/[.-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    if (parts[i] !== min[i]) return parts[i] > min[i];
  }
  return true;
}

/** Every process checks the server before it reads or writes: JetStream features of 2.9 are required. */
export function requireJetStreamServer(nc: NatsConnection): void {
  const version = nc.info?.version ?? '0.0.0';
  if (!serverAtLeast(version))
    throw new Error(`nats-server ${version} is too old: JetStream features of 2.9 are required`);
}

/** The three streams as the service wants them; `replicas` is STREAM_REPLICAS. */
export function streamConfigs(
  replicas: number,
  streams: StreamNames = DEFAULT_STREAMS,
): Array<Partial<StreamConfig> & { name: string; subjects: string[] }> {
  const base = {
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
  };
  return [
    { ...base, name: streams.events, subjects: ['scaffold.run.>'], duplicate_window: 5 * 60 * SECONDS },
    { ...base, name: streams.logs, subjects: ['scaffold.logs.>'], max_age: 30 * 24 * 3600 * SECONDS },
    {
      ...base,
      name: streams.inputs,
      subjects: ['scaffold.input.>'],
      max_age: 90 * 24 * 3600 * SECONDS,
      max_msgs_per_subject: 1,
    },
  ];
}

/**
 * Stream administration, apart from reading and writing: the service applies the configuration once
 * at start (creating or updating the streams). The runner and scaffolderctl never call it, so a
 * read-only command cannot change a production stream (e.g. its replica count).
 */
export class StreamAdmin {
  constructor(
    private readonly nc: NatsConnection,
    private readonly streams: StreamNames = DEFAULT_STREAMS,
  ) {}

  async apply(replicas: number): Promise<void> {
    requireJetStreamServer(this.nc);
    const jsm = await jetstreamManager(this.nc);
    for (const config of streamConfigs(replicas, this.streams)) {
      try {
        await jsm.streams.info(config.name);
        await jsm.streams.update(config.name, config);
      } catch (e) {
        if (e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) await jsm.streams.add(config);
        else throw e;
      }
    }
  }
}

/** A stream's replication as the server reports it. */
export interface StreamReplicas {
  stream: string;
  /** `num_replicas` of the stream's configuration (STREAM_REPLICAS where the service applied it). */
  configured: number;
  /** The copies that are up to date: the leader plus every follower the leader reports current and online. */
  current: number;
}

/**
 * From STREAM.INFO: a standalone server reports no `cluster` (its one copy answered, so it is current);
 * in a cluster the leader is current by definition and `cluster.replicas` lists the followers, each with
 * `current` (caught up) and `offline`. No leader means no copy can serve the stream.
 */
export function streamReplicas(info: StreamInfo): StreamReplicas {
  const { cluster } = info;
  const followers = (cluster?.replicas ?? []).filter((peer) => peer.current && !peer.offline).length;
  const current = !cluster ? 1 : cluster.leader ? 1 + followers : 0;
  return { stream: info.config.name, configured: info.config.num_replicas, current };
}
