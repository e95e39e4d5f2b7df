/**
 * The generator's summary, changes and credential plan in words: what generate-gitops-env prints and
 * what scaffolderctl prints of the service's preview (the same summary, one way of reading it).
 */
import type { GenerateSummary } from './generate';
import type { PreviewChange } from './preview';
import { CREDENTIAL_CLASSES } from './credential-plan';
import { leftoverLine } from './leftovers';

/** "12 generated, 3 derived, 1 supplied" (classes in a fixed order, only those present). */
function planCounts(summary: GenerateSummary): string {
  const counts = new Map<string, number>();
  for (const e of summary.credential_plan) counts.set(e.class, (counts.get(e.class) ?? 0) + 1);
  return CREDENTIAL_CLASSES.filter((c) => counts.has(c))
    .map((c) => `${counts.get(c)} ${c}`)
    .join(', ');
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const changeLine = (c: PreviewChange, note = '') => `  ${c.change.padEnd(8)} ${c.path}${note}\n`;

/**
 * A dry run's changes: a line per file, then the diffs. Files copied unchanged from the reference
 * (shared folders, bootstrap files) are a count and their paths: their content is the reference's,
 * and a gotk-components.yaml alone would be 10,000 lines of diff.
 */
export function describeChanges(changes: PreviewChange[]): string {
  if (changes.length === 0) return 'dry run: nothing would change\n';
  const copied = changes.filter((c) => c.copied_from !== undefined);
  const edited = changes.filter((c) => c.copied_from === undefined);
  const copies =
    copied.length === 0
      ? ''
      : `${plural(copied.length, 'file')} copied unchanged from the reference (content not shown):\n` +
        copied.map((c) => changeLine(c, c.copied_from === c.path ? '' : ` (from ${c.copied_from})`)).join('');
  return (
    `dry run: ${plural(changes.length, 'file')} would change (nothing was written)\n` +
    edited.map((c) => changeLine(c)).join('') +
    copies +
    `\n${edited.map((c) => c.diff).join('\n')}\n`
  );
}

/** The credential plan, a line per key (classes only). */
export function describePlan(summary: GenerateSummary): string {
  return summary.credential_plan
    .map(
      (e) =>
        `  credential ${e.namespace}/${e.name}/${e.key}: ${e.class}${e.from ? ` (from ${e.from.join(', ')})` : ''}${e.used_by ? ` (read by ${e.used_by.join(', ')})` : ''}${e.store ? ` (${e.external_secret} reads ${e.remote_key} from ${e.store})` : ''}\n`,
    )
    .join('');
}

const schemaCounts = (summary: GenerateSummary) =>
  summary.schema_checked ? `, ${plural(summary.schema_checked.objects, 'object')} against their schemas` : '';

/**
 * A pass's summary. `planned`: a dry run's or a preview's, whose files were not written: it says what would be
 * written and removed (its lines follow describeChanges' "nothing was written").
 */
export function describeSummary(summary: GenerateSummary, { planned = false } = {}): string {
  const files = planned
    ? `  files that would be written: ${summary.paths_written.length}, removed: ${summary.paths_removed.length}`
    : `  files written: ${summary.paths_written.length}, removed: ${summary.paths_removed.length}`;
  const lines = [
    `${summary.pass} pass for ${summary.cluster_name} (${summary.domain}, ${summary.region}) from ${summary.reference_env}${summary.reference_domain ? ` (${summary.reference_domain})` : ''}`,
    ...summary.hosts.map((h) => `  host ${h.from} -> ${h.to}`),
    summary.environment_model === 'cluster-vars'
      ? `  cluster-vars: ${Object.entries(summary.cluster_vars ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`
      : summary.environment_model === 'flux-example'
        ? `  folders: ${[summary.gitops_path, ...summary.overlay_paths].join(', ')}`
        : `  layers: ${summary.layers.join(', ')}`,
    `  kustomizations: ${summary.kustomizations.map((k) => k.name).join(', ')}`,
    files,
    ...(summary.shared_paths_copied.length > 0
      ? [`  shared folders copied into the repository (they were missing): ${summary.shared_paths_copied.join(', ')}`]
      : []),
    ...summary.omitted_encrypted.map((o) => `  left out ${o.path}: ${o.reason}`),
    ...summary.ingress_hosts.map((i) => `  ingress ${i.namespace ?? 'default'}/${i.name}: ${i.to.join(', ')}`),
    ...summary.objects_sealed.map(
      (s) =>
        `  sealed ${s.namespace}/${s.name} (${plural(s.keys.length, 'key')}, ${s.scope}${s.reused ? ', kept' : ''})`,
    ),
    ...(summary.credential_plan.length > 0 ? [`  credentials: ${planCounts(summary)}`] : []),
    ...summary.remote_keys
      .filter((m) => m.moved)
      .map((m) => `  remote key ${m.object} ${m.field}: ${m.from} -> ${m.to}`),
    ...summary.paths_moved.map((m) => `  path ${m.where}: ${m.from} -> ${m.to}`),
    ...(summary.replaced.length > 0 ? [`  --replace rewrote: ${summary.replaced.join(', ')}`] : []),
    ...(summary.leftovers.length > 0
      ? [
          `  leftovers of the reference: ${summary.leftovers.length}`,
          ...summary.leftovers.map((l) => `  leftover ${leftoverLine(l)}`),
        ]
      : []),
    `  validated: ${summary.validated ? plural(summary.validated.length, 'folder') + ' with kustomize' + schemaCounts(summary) : 'no'}`,
    ...summary.warnings.map((w) => `  warning: ${w}`),
  ];
  return lines.join('\n') + '\n';
}

/**
 * A dry run in words: its changes, its summary and its credential plan. What `generate-gitops-env --dry-run` and
 * `scaffolderctl preview` print, and the body of a pass's merge request (the same text for the same pass).
 */
export function describeDryRun(summary: GenerateSummary, changes: PreviewChange[]): string {
  return describeChanges(changes) + describeSummary(summary, { planned: true }) + describePlan(summary);
}

/**
 * The full pass an infra pass rehearsed, in words: what it would seal and leave, its credential plan and its
 * warnings (its files are the run's later pass, not this one's changes). Printed after an infra pass's preview.
 */
export function describeRehearsal(summary: GenerateSummary): string {
  return (
    "the full pass that follows, rehearsed with a throwaway certificate until the cluster's own is fetched:\n" +
    describeSummary(summary, { planned: true })
      .split('\n')
      .slice(1)
      .filter((line) => line.length > 0)
      .map((line) => `${line}\n`)
      .join('') +
    describePlan(summary)
  );
}
