#!/usr/bin/env node
// Renders permissions.json as a nats-server config fragment (`conf`) or as nsc commands for an
// operator/account JWT setup (`nsc`), so both forms come from one list. The step consumers' durables come
// from the run plans (libs/events/src/run-plans.ts, compiled: run `npm run build` first).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'permissions.json'), 'utf8'));

/** Each subject once per value of a placeholder it holds, as it is otherwise. */
const expand = (list, placeholder, values) =>
  list.flatMap((s) => (s.includes(placeholder) ? values.map((v) => s.replaceAll(placeholder, v)) : [s]));

/** The durables of the step consumers of every step of the kept run plans, from the compiled plans. */
export function planDurables() {
  const require = createRequire(import.meta.url);
  let events;
  try {
    events = require('../../dist/libs/events/src/run-plans.js');
  } catch (e) {
    throw new Error(`render.mjs reads the run plans from dist: run npm run build first (${e.message})`, { cause: e });
  }
  const { durableNameFor, stepNames } = require('../../dist/libs/events/src/run-plan.js');
  return stepNames(events.keptPlans()).map(durableNameFor);
}

/** The service's durable consumers: its own (permissions.json) and one per step of the run plans. */
export const serviceDurables = (stepDurables) => [...source.service_durables, ...stepDurables];

/** A role's subjects with {stream} and {durable} expanded and {inbox} replaced by its inbox prefix. */
export function subjects(role, list, stepDurables) {
  return expand(expand(list, '{stream}', source.streams), '{durable}', serviceDurables(stepDurables)).map((s) =>
    s.replaceAll('{inbox}', role.inbox),
  );
}

/** What a role may publish: its own list, and the inboxes of the roles whose requests it answers. */
export function publishes(role, stepDurables) {
  const answered = (role.answers ?? []).map((name) => `${source.roles[name].inbox}.>`);
  return [...subjects(role, role.publish, stepDurables), ...answered];
}

const quote = (s) => JSON.stringify(s);

/** The server-config form, with these step durables (by default the compiled run plans'). */
export function conf(stepDurables = planDurables()) {
  const out = [
    '# Generated from permissions.json by `node deploy/nats/render.mjs conf`: edit that file, not this one.',
  ];
  for (const [name, role] of Object.entries(source.roles)) {
    out.push(
      '',
      `# ${name}: ${role.description} (NATS_INBOX_PREFIX=${role.inbox})`,
      `${name.toUpperCase()}_PERMISSIONS = {`,
    );
    const deny = role.deny ? `, deny: [${subjects(role, role.deny, stepDurables).map(quote).join(', ')}]` : '';
    out.push(`  publish: { allow: [${publishes(role, stepDurables).map(quote).join(', ')}]${deny} }`);
    out.push(`  subscribe: { allow: [${subjects(role, role.subscribe, stepDurables).map(quote).join(', ')}] }`);
    out.push('}');
  }
  return out.join('\n') + '\n';
}

/** The nsc commands, with these step durables (by default the compiled run plans'). */
export function nsc(stepDurables = planDurables()) {
  const out = ['# nsc commands for the same identities (run in the account that holds the SCAFFOLD_* streams)'];
  for (const [name, role] of Object.entries(source.roles)) {
    // Single quotes: the shell must not expand $JS.
    const args = [
      `nsc add user scaffolder-${name}`,
      `--allow-pub '${publishes(role, stepDurables).join(',')}'`,
      ...(role.deny ? [`--deny-pub '${subjects(role, role.deny, stepDurables).join(',')}'`] : []),
      `--allow-sub '${subjects(role, role.subscribe, stepDurables).join(',')}'`,
    ];
    out.push(`# ${name}: NATS_INBOX_PREFIX=${role.inbox}`, args.join(' \\\n  '));
  }
  return out.join('\n') + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv[2];
  if (what === 'conf') process.stdout.write(conf());
  else if (what === 'nsc') process.stdout.write(nsc());
  else {
    process.stderr.write('usage: render.mjs conf|nsc\n');
    process.exit(2);
  }
}
