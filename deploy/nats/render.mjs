#!/usr/bin/env node
// Renders permissions.json as a nats-server config fragment (`conf`) or as nsc commands for an
// operator/account JWT setup (`nsc`), so both forms come from one list.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'permissions.json'), 'utf8'));

/** Each subject once per value of a placeholder it holds, as it is otherwise. */
const expand = (list, placeholder, values) =>
  list.flatMap((s) => (s.includes(placeholder) ? values.map((v) => s.replaceAll(placeholder, v)) : [s]));

/** A role's subjects with {stream} and {durable} expanded and {inbox} replaced by its inbox prefix. */
export function subjects(role, list) {
  return expand(expand(list, '{stream}', source.streams), '{durable}', source.service_durables).map((s) =>
    s.replaceAll('{inbox}', role.inbox),
  );
}

/** What a role may publish: its own list, and the inboxes of the roles whose requests it answers. */
export function publishes(role) {
  const answered = (role.answers ?? []).map((name) => `${source.roles[name].inbox}.>`);
  return [...subjects(role, role.publish), ...answered];
}

const quote = (s) => JSON.stringify(s);

function conf() {
  const out = [
    '# Generated from permissions.json by `node deploy/nats/render.mjs conf`: edit that file, not this one.',
  ];
  for (const [name, role] of Object.entries(source.roles)) {
    out.push(
      '',
      `# ${name}: ${role.description} (NATS_INBOX_PREFIX=${role.inbox})`,
      `${name.toUpperCase()}_PERMISSIONS = {`,
    );
    const deny = role.deny ? `, deny: [${subjects(role, role.deny).map(quote).join(', ')}]` : '';
    out.push(`  publish: { allow: [${publishes(role).map(quote).join(', ')}]${deny} }`);
    out.push(`  subscribe: { allow: [${subjects(role, role.subscribe).map(quote).join(', ')}] }`);
    out.push('}');
  }
  return out.join('\n') + '\n';
}

function nsc() {
  const out = ['# nsc commands for the same identities (run in the account that holds the SCAFFOLD_* streams)'];
  for (const [name, role] of Object.entries(source.roles)) {
    // Single quotes: the shell must not expand $JS.
    const args = [
      `nsc add user scaffolder-${name}`,
      `--allow-pub '${publishes(role).join(',')}'`,
      ...(role.deny ? [`--deny-pub '${subjects(role, role.deny).join(',')}'`] : []),
      `--allow-sub '${subjects(role, role.subscribe).join(',')}'`,
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
