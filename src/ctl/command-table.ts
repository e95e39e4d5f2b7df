/**
 * Every scaffolderctl command with its arguments, what it does and its options: the parser, the help
 * texts and the shell completion are all made from this one table.
 */
import { type OptionSpec, type OptionTable, SHELLS } from '#libs/cli';
import { RUN_STATUSES } from '#libs/run-decider/run-statuses';

export interface CommandSpec {
  args: string;
  does: string;
  /** stream: NATS and PostgreSQL; api: the service's REST API; local: neither. */
  via: 'stream' | 'api' | 'local';
  options: OptionTable;
  /** The words the first argument completes to. */
  argWords?: readonly string[];
}

/** A whole-number option: main() turns it into a number (exit 2 for anything else) before it connects anywhere. */
export type NumberOption = OptionSpec & { min: number };

const json = (help = 'JSON (one object per line)'): OptionTable => ({ json: { type: 'boolean', help } });
const number = (help: string, min = 0): NumberOption => ({ type: 'string', value: 'N', help, min });
const run: OptionSpec = { type: 'string', value: 'ID', help: 'one run only' };
const requestFile: OptionSpec = {
  type: 'string',
  short: 'f',
  value: 'FILE',
  hint: 'file',
  help: 'the request as the API takes it (JSON; - reads stdin)',
};
const API: OptionTable = {
  url: { type: 'string', value: 'URL', help: 'the service (default SCAFFOLDER_URL)' },
  'api-key-file': {
    type: 'string',
    value: 'FILE',
    hint: 'file',
    help: 'a file (mode 0600) holding the API key (default SCAFFOLDER_API_KEY_FILE; never the key itself)',
  },
};

export const COMMANDS: Record<string, CommandSpec> = {
  create: {
    args: '',
    does: 'start a run from a request file; --wait follows it to its end (exit code from its outcome)',
    via: 'api',
    options: {
      file: requestFile,
      wait: { type: 'boolean', help: "print the run's events as they happen until it ends" },
      timeout: number('with --wait: stop waiting after N seconds (exit 5; the run goes on)'),
      'idempotency-key': { type: 'string', value: 'KEY', help: 'the same key and body give the same run' },
      ...API,
      ...json('the run (with --wait: each event) as JSON'),
    },
  },
  preview: {
    args: '',
    does: 'what a run of a request file would change: the diff and the credential plan (nothing pushed)',
    via: 'api',
    options: { file: requestFile, ...API, ...json("the service's answer as JSON") },
  },
  get: {
    args: 'RUN',
    does: 'a run: status, step, message, commits',
    via: 'api',
    options: { ...API, ...json('the run as JSON') },
  },
  environments: {
    args: '[ID]',
    does: "the key's environments (one with ID): the reference commit that made each and the commits it is behind",
    via: 'api',
    options: {
      'cluster-name': { type: 'string', value: 'NAME', help: 'only this cluster' },
      limit: number('at most N environments (1 to 500; default 50)', 1),
      cursor: { type: 'string', value: 'CURSOR', help: 'the next page (as the last page said)' },
      ...API,
      ...json('the answer as JSON'),
    },
  },
  list: {
    args: '',
    does: 'runs the key may see, newest first',
    via: 'api',
    options: {
      status: {
        type: 'string',
        value: 'STATUS',
        hint: RUN_STATUSES,
        help: `only runs in it (${RUN_STATUSES.join(', ')})`,
      },
      limit: number('at most N runs (1 to 500; default 50)', 1),
      cursor: { type: 'string', value: 'CURSOR', help: 'the next page (as the last page said)' },
      ...API,
      ...json('the page as JSON'),
    },
  },
  logs: {
    args: 'RUN',
    does: "a run's log; -f follows it until the run ends (exit code from its outcome)",
    via: 'api',
    options: { follow: { type: 'boolean', short: 'f', help: 'follow the log until the run ends' }, ...API },
  },
  cancel: {
    args: 'RUN',
    does: 'cancel a run at its next step boundary, through the API',
    via: 'api',
    options: { ...API, ...json('the run as JSON') },
  },
  redrive: {
    args: 'RUN',
    does: "run a run's current step again (idempotent), through the API",
    via: 'api',
    options: { ...API, ...json('the run as JSON') },
  },
  events: {
    args: 'RUN',
    does: "a run's history from the stream",
    via: 'stream',
    options: json('one event per line as JSON'),
  },
  tail: {
    args: '',
    does: 'the last events, then new ones as they are appended (Ctrl-C stops)',
    via: 'stream',
    options: {
      run,
      count: number('how many of the last events to print first (default 10)'),
      new: number('stop after N new events'),
      ...json('JSON lines'),
    },
  },
  replay: {
    args: '',
    does: 'print events again from a sequence or a time, or re-feed them to the read-model',
    via: 'stream',
    options: {
      'from-seq': number('from stream sequence N', 1),
      since: { type: 'string', value: 'TIME', help: 'from an RFC 3339 time' },
      run,
      apply: { type: 'boolean', help: 'apply them to the read-model instead of printing' },
      ...json('JSON lines'),
    },
  },
  'rebuild-projection': {
    args: '',
    does: 'rebuild the read-model from sequence 1 and swap it in',
    via: 'stream',
    options: {
      'keep-old': { type: 'boolean', help: 'keep the previous table as scaffold_runs_old' },
      ...json('the result as JSON'),
    },
  },
  'stream-info': {
    args: '',
    does: 'the event stream and every consumer with its lag',
    via: 'stream',
    options: json('as JSON'),
  },
  status: {
    args: '',
    does: 'stream-info plus runs without progress and messages no run accepted (skipped and refused)',
    via: 'stream',
    options: { 'stuck-minutes': number('runs without progress for N minutes (default 30)'), ...json('as JSON') },
  },
  completion: {
    args: 'SHELL',
    does: `the shell completion script (${SHELLS.join(', ')}), e.g. source <(scaffolderctl completion bash)`,
    via: 'local',
    options: {},
    argWords: SHELLS,
  },
};

/** What every command takes besides its own options. */
export const COMMON: OptionTable = { help: { type: 'boolean', short: 'h', help: 'this text' } };
/** What scaffolderctl takes without a command. */
export const GLOBAL: OptionTable = { ...COMMON, version: { type: 'boolean', help: 'the version' } };
