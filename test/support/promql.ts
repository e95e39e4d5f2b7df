/**
 * The metric names a PromQL expression reads, found by a small tokenizer: enough for the rules and the
 * dashboard panels the chart ships (selectors, aggregations with by/without, functions, binary
 * operators, range and offset durations, Grafana's $variables), not a full PromQL parser.
 */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/** Grafana's label_values(metric, label) names one metric, then a label that is not one. */
const LABEL_VALUES = /label_values\(\s*([a-zA-Z_:][\w:]*)?[^)]*\)/g;

export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  const rest = expr
    .replace(LABEL_VALUES, (_, metric: string | undefined) => (metric ? ` ${metric} ` : ' '))
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ') // strings (label values, quantile args)
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // range and subquery durations
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\$\{?\w+\}?/g, ' '); // Grafana variables
  for (const m of rest.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, word, call] = m;
    if (call || KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names];
}

/**
 * Every series name a Prometheus text exposition declares, from its `# TYPE` lines: a counter's or
 * gauge's own name, a histogram's _bucket, _sum and _count, a summary's _sum and _count (and its own
 * name, the quantiles). Declared, not only observed: a labelled histogram has no sample until its first
 * observation, but Prometheus will have its series once the service observes one.
 */
export function exportedSeriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return names;
}
