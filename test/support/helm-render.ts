import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * A minimal Go-template pass for Helm charts, enough for this chart's subset: values and release
 * fields, include/define, if/else/range/end, add, and the pipeline functions quote, nindent, indent and
 * toYaml. No helm binary is packaged for these machines; anything outside the subset throws, so a
 * template the renderer cannot handle fails the test instead of rendering wrongly.
 */
type Node = { kind: 'text'; text: string } | { kind: 'action'; expr: string } | { kind: 'block'; type: 'if' | 'range'; expr: string; body: Node[]; alt: Node[] };

function tokenize(src: string): Array<{ text?: string; action?: string }> {
  const out: Array<{ text?: string; action?: string }> = [];
  const re = /\{\{(-?)\s*([\s\S]*?)\s*(-?)\}\}/g;
  let last = 0;
  let m: RegExpExecArray | null;
  let trimNext = false;
  while ((m = re.exec(src))) {
    let text = src.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1] === '-') text = text.replace(/\s+$/, '');
    out.push({ text }, { action: m[2] });
    trimNext = m[3] === '-';
    last = re.lastIndex;
  }
  let tail = src.slice(last);
  if (trimNext) tail = tail.replace(/^\s+/, '');
  out.push({ text: tail });
  return out;
}

function parseNodes(tokens: Array<{ text?: string; action?: string }>, defines: Map<string, Node[]>): Node[] {
  const root: Node[] = [];
  const stack: Array<{ nodes: Node[]; block?: Node & { kind: 'block' }; defineName?: string; inAlt?: boolean }> = [{ nodes: root }];
  for (const t of tokens) {
    const top = stack[stack.length - 1];
    const target = top.block && top.inAlt ? top.block.alt : top.nodes;
    if (t.text !== undefined) {
      if (t.text) target.push({ kind: 'text', text: t.text });
      continue;
    }
    const a = t.action!;
    if (a.startsWith('/*')) continue;
    let m: RegExpMatchArray | null;
    if ((m = a.match(/^define "([^"]+)"$/))) stack.push({ nodes: [], defineName: m[1] });
    else if ((m = a.match(/^(if|range) (.+)$/))) {
      const block: Node & { kind: 'block' } = { kind: 'block', type: m[1] as 'if' | 'range', expr: m[2], body: [], alt: [] };
      target.push(block);
      stack.push({ nodes: block.body, block });
    } else if (a === 'else') top.inAlt = true;
    else if (a === 'end') {
      const done = stack.pop()!;
      if (done.defineName) defines.set(done.defineName, done.nodes);
    } else target.push({ kind: 'action', expr: a });
  }
  if (stack.length !== 1) throw new Error('unbalanced template blocks');
  return root;
}

interface Scope {
  dot: any;
  root: any;
  defines: Map<string, Node[]>;
}

function lookup(path: string, scope: Scope): any {
  if (path === '.') return scope.dot;
  const [base, rest] = path.startsWith('$') ? [scope.root, path.slice(1)] : [scope.dot, path];
  return rest
    .split('.')
    .filter(Boolean)
    .reduce((v, k) => (v == null ? undefined : v[k]), base);
}

function evalArg(arg: string, scope: Scope): any {
  if (/^".*"$/.test(arg)) return JSON.parse(arg);
  if (/^\d+$/.test(arg)) return Number(arg);
  if (arg === '.' || arg.startsWith('.') || arg.startsWith('$')) return lookup(arg, scope);
  throw new Error(`unsupported template argument: ${arg}`);
}

function evalPipeline(expr: string, scope: Scope): any {
  const [first, ...fns] = expr.split('|').map((s) => s.trim());
  const words = first.match(/"[^"]*"|\S+/g)!;
  let value: any;
  if (words[0] === 'include') value = render(scope.defines.get(JSON.parse(words[1])) ?? missing(words[1]), { ...scope, dot: evalArg(words[2], scope) });
  else if (words[0] === 'toYaml') value = stringify(evalArg(words[1], scope)).trimEnd();
  else if (words[0] === 'add') value = words.slice(1).reduce((sum, w) => sum + Number(evalArg(w, scope)), 0);
  else if (words.length === 1) value = evalArg(words[0], scope);
  else throw new Error(`unsupported template expression: ${first}`);
  for (const fn of fns) {
    const [name, n] = fn.split(/\s+/);
    if (name === 'quote') value = JSON.stringify(String(value ?? ''));
    else if (name === 'nindent')
      value =
        '\n' +
        String(value)
          .split('\n')
          .map((l) => ' '.repeat(Number(n)) + l)
          .join('\n');
    else if (name === 'indent')
      value = String(value)
        .split('\n')
        .map((l) => ' '.repeat(Number(n)) + l)
        .join('\n');
    else throw new Error(`unsupported template function: ${name}`);
  }
  return value;
}

const missing = (name: string): never => {
  throw new Error(`template ${name} is not defined`);
};

function render(nodes: Node[], scope: Scope): string {
  return nodes
    .map((n) => {
      if (n.kind === 'text') return n.text;
      if (n.kind === 'action') return String(evalPipeline(n.expr, scope) ?? '');
      const v = evalPipeline(n.expr, scope);
      if (n.type === 'if') return render(v && !(Array.isArray(v) && v.length === 0) ? n.body : n.alt, scope);
      return (Array.isArray(v) ? v : []).map((item) => render(n.body, { ...scope, dot: item })).join('');
    })
    .join('');
}

/** Renders every template of a chart with its default values (plus overrides); returns file -> text. */
export function renderChart(chartDir: string, release = { Name: 'release', Namespace: 'kubeopera-core', Service: 'Helm' }, overrides: Record<string, unknown> = {}): Map<string, string> {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'));
  const values = { ...parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')), ...overrides };
  const root = { Values: values, Release: release, Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion } };
  const defines = new Map<string, Node[]>();
  const files = readdirSync(join(chartDir, 'templates')).sort();
  const parsed = files.map((f) => [f, parseNodes(tokenize(readFileSync(join(chartDir, 'templates', f), 'utf8')), defines)] as const);
  const out = new Map<string, string>();
  for (const [file, nodes] of parsed) {
    if (file.startsWith('_')) continue;
    out.set(file, render(nodes, { dot: root, root, defines }));
  }
  return out;
}
