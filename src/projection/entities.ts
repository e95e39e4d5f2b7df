import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RunState } from '#libs/run-decider';

/** One row per run: what GET returns, plus the folded state and the last applied stream sequence. */
export abstract class RunRowColumns {
  @PrimaryColumn('uuid') id!: string;
  @Column('text') status!: string;
  @Column('text', { nullable: true }) step!: string | null;
  @Column('text') message!: string;
  @Column('text') cluster_name!: string;
  @Column('text') repo_url!: string;
  @Column('text') branch!: string;
  @Column('text', { nullable: true }) infra_commit!: string | null;
  @Column('text', { nullable: true }) full_commit!: string | null;
  @Column('timestamptz') created_at!: Date;
  @Column('timestamptz') updated_at!: Date;
  @Column('timestamptz', { nullable: true }) finished_at!: Date | null;
  @Column('bigint') last_seq!: string;
  @Column('jsonb') state!: RunState;
}

/** The live read-model. */
@Entity({ name: 'scaffold_runs' })
export class ScaffoldRunRow extends RunRowColumns {}

/** Where a rebuild replays into before it is swapped in. */
@Entity({ name: 'scaffold_runs_rebuild' })
export class ScaffoldRunRebuildRow extends RunRowColumns {}

/** Where each projection stands in the stream; written in the same transaction as the rows. */
@Entity({ name: 'projection_checkpoints' })
export class ProjectionCheckpoint {
  @PrimaryColumn('text') name!: string;
  @Column('bigint') last_seq!: string;
  @Column('timestamptz') updated_at!: Date;
}

/** A message on an event subject that is not a valid event: skipped by every reader, recorded once by the projector. */
@Entity({ name: 'skipped_stream_messages' })
export class SkippedStreamMessage {
  @PrimaryColumn('bigint') seq!: string;
  @Column('text') subject!: string;
  @Column('text') reason!: string;
  @Column('timestamptz') seen_at!: Date;
}
