import { readFileSync } from 'node:fs';
import Ajv, { ErrorObject } from 'ajv';
import { parse, YAMLError } from 'yaml';
import { repositoryPrefixProblem } from '#libs/git';
import { ApiKey, ROLES, sha256Of } from './api-key';
import { readableFile, SettingError } from './setting-files';

const VARIABLE = 'API_KEYS_FILE';
const NAMESPACE = { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' } as const;

/** One entry of API_KEYS_FILE: a named key (or its SHA-256), its role, and optionally where it may act. */
const FILE_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'role'],
    oneOf: [{ required: ['key'] }, { required: ['key_sha256'] }],
    properties: {
      name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,100}$' },
      role: { enum: [...ROLES] },
      key: { type: 'string', minLength: 16 },
      key_sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
      repositories: { type: 'array', items: { type: 'string', minLength: 1 } },
      secret_namespaces: { type: 'array', items: NAMESPACE },
    },
  },
} as const;

const validateFile = new Ajv({ allErrors: true, strict: false }).compile(FILE_SCHEMA);

interface FileEntry {
  name: string;
  role: ApiKey['role'];
  key?: string;
  key_sha256?: string;
  repositories?: string[];
  secret_namespaces?: string[];
}

/** An ajv problem as "entry 2 (name "x") role: must be ...": names the place, never the value (it could be a key). */
function describe(entries: unknown[], e: ErrorObject): string {
  const [index, ...field] = e.instancePath.split('/').slice(1);
  const entry = entries[Number(index)] as { name?: unknown } | undefined;
  const named = typeof entry?.name === 'string' ? ` (name ${JSON.stringify(entry.name.slice(0, 100))})` : '';
  const where = index === undefined ? 'the file' : `entry ${Number(index) + 1}${named}`;
  const message =
    e.keyword === 'oneOf'
      ? 'needs exactly one of key or key_sha256'
      : e.keyword === 'additionalProperties'
        ? `unknown field ${(e.params as any).additionalProperty}`
        : e.message;
  return `${where}${field.length ? ` ${field.join('.')}` : ''}: ${message}`;
}

/** The file's YAML; a syntax error is named by position only (the yaml library's message quotes the line, which could hold a key). */
function parseYaml(text: string): unknown {
  try {
    return parse(text);
  } catch (e) {
    if (!(e instanceof YAMLError)) throw e;
    const at = e.linePos?.[0];
    throw new SettingError(`${VARIABLE}: not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}`);
  }
}

function keyOf(entry: FileEntry): ApiKey {
  for (const prefix of entry.repositories ?? []) {
    const problem = repositoryPrefixProblem(prefix);
    if (problem)
      throw new SettingError(`${VARIABLE}: key "${entry.name}" repositories: ${JSON.stringify(prefix)} ${problem}`);
  }
  return {
    sha256: entry.key !== undefined ? sha256Of(entry.key) : Buffer.from(entry.key_sha256!, 'hex'),
    role: entry.role,
    ...(entry.repositories ? { repositories: entry.repositories } : {}),
    ...(entry.secret_namespaces ? { secretNamespaces: entry.secret_namespaces } : {}),
  };
}

/**
 * API_KEYS_FILE: a YAML list of `{name, role, key | key_sha256, repositories, secret_namespaces}`,
 * read once at start. Anything wrong stops the process with a SettingError naming the entry and the
 * field, never a key.
 */
export function readApiKeysFile(path: string): Map<string, ApiKey> {
  const entries = parseYaml(readFileSync(readableFile(VARIABLE, path), 'utf8'));
  if (!validateFile(entries)) {
    const list = Array.isArray(entries) ? entries : [];
    // A failed oneOf also reports each branch's own failure; its summary says it once.
    const problems = validateFile
      .errors!.filter((e) => !e.schemaPath.includes('/oneOf/'))
      .map((e) => describe(list, e));
    throw new SettingError(`${VARIABLE}: ${[...new Set(problems)].join('; ')}`);
  }
  const keys = new Map<string, ApiKey>();
  for (const entry of entries as FileEntry[]) {
    if (keys.has(entry.name)) throw new SettingError(`${VARIABLE}: key name "${entry.name}" appears twice`);
    keys.set(entry.name, keyOf(entry));
  }
  return keys;
}
