import { execFileSync } from 'node:child_process';
import { createDecipheriv, createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { tempDir } from './files';
import { requiredTool } from './tools';

/** An age identity made by the real age-keygen (Debian package `age`). */
export function ageIdentity(): { keyFile: string; recipient: string } {
  const dir = tempDir('age');
  const keyFile = join(dir, 'key.txt');
  execFileSync(requiredTool('age-keygen'), ['-o', keyFile], { stdio: 'ignore' });
  const recipient = execFileSync(requiredTool('age-keygen'), ['-y', keyFile], { encoding: 'utf8' }).trim();
  return { keyFile, recipient };
}

const ENC = /^ENC\[AES256_GCM,data:([^,]*),iv:([^,]+),tag:([^,]+),type:(\w+)\]$/;

function openValue(key: Buffer, value: string, aad: string): { text: string; type: string } {
  const m = ENC.exec(value);
  if (!m) throw new Error(`not a sops value: ${value.slice(0, 20)}`);
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(m[2], 'base64'));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(Buffer.from(m[3], 'base64'));
  return { text: Buffer.concat([d.update(Buffer.from(m[1], 'base64')), d.final()]).toString('utf8'), type: m[4] };
}

/**
 * Opens a SOPS document the way sops does, written independently of the production code: the data
 * key from the `age` command line, every ENC value with its path as associated data, and the MAC
 * recomputed over all values and compared.
 */
export function sopsOpen(doc: any, keyFile: string): { plain: any; macOk: boolean } {
  const dir = tempDir('sops-open');
  const entry = doc.sops.age[0];
  writeFileSync(join(dir, 'enc.age'), entry.enc);
  const key = execFileSync(requiredTool('age'), ['-d', '-i', keyFile, join(dir, 'enc.age')]);
  if (key.length !== 32) throw new Error(`data key is ${key.length} bytes`);
  const hash = createHash('sha512');
  const walk = (node: any, path: string[]): any => {
    if (Array.isArray(node)) return node.map((n) => walk(n, path));
    if (node && typeof node === 'object')
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, [...path, k])]));
    if (typeof node === 'string' && node.startsWith('ENC[')) {
      const { text, type } = openValue(key, node, path.join(':') + ':');
      hash.update(text);
      return type === 'int' ? Number(text) : text;
    }
    hash.update(typeof node === 'boolean' ? (node ? 'True' : 'False') : String(node ?? ''));
    return node;
  };
  const { sops, ...body } = doc;
  const plain = walk(body, []);
  const mac = openValue(key, sops.mac, sops.lastmodified).text;
  return { plain, macOk: mac === hash.digest('hex').toUpperCase() };
}

/**
 * A sops file of any format as the document `sopsOpen` reads: yaml and json as they are, binary
 * (`{"data": ..., "sops": ...}`) likewise, dotenv unflattened from its `sops_*` lines the way sops'
 * dotenv store reads them (`__map_`/`__list_` separators, `\n` escapes).
 */
export function sopsDocument(text: string, format: 'yaml' | 'json' | 'dotenv' | 'binary'): any {
  if (format === 'yaml') return parseYaml(text);
  if (format !== 'dotenv') return JSON.parse(text);
  const doc: any = { sops: {} };
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
    const eq = line.indexOf('=');
    const [key, value] = [line.slice(0, eq), line.slice(eq + 1).replace(/\\n/g, '\n')];
    if (!key.startsWith('sops_')) {
      doc[key] = value;
      continue;
    }
    const tokens = key.slice('sops_'.length).split(/__(?=map_|list_)/);
    let node = doc.sops;
    tokens.forEach((token, i) => {
      const name = token.replace(/^map_/, '').replace(/^list_/, '');
      const last = i === tokens.length - 1;
      const nextIsList = !last && tokens[i + 1].startsWith('list_');
      if (last) node[name] = value;
      else node = node[name] ??= nextIsList ? [] : {};
    });
  }
  return doc;
}

/** Gives the Flux Kustomization over `path` in `file` the reference's own SOPS decryption (provider sops, Secret sops-age). */
export function addSopsDecryption(file: string, path: string) {
  const line = `path: ${path}\n`;
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      line,
      `${line}  decryption:\n    provider: sops\n    secretRef:\n      name: sops-age\n`,
    ),
  );
}
