/**
 * Characters that end or rewrite a line on a terminal or in a text log: C0 controls but tab (and, where
 * lines are kept, line feed), DEL, C1 controls (NEL, CSI), Unicode's line and paragraph separators, and
 * the bidirectional overrides that make text show in another order than it is.
 */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_LINE_FEED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r' };

const escape = (c: string) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` as one line: every control character (line breaks included) written as its escape (`\n`, `\u001b`). */
export const printableLine = (text: string): string => text.replace(CONTROLS, escape);

/**
 * `text` with its lines kept and every other control character escaped: what may go to a terminal from a
 * source the reader does not control (an escape sequence there could clear the screen, fake lines, set the
 * window title or write the clipboard).
 */
export const printableText = (text: string): string => text.replace(CONTROLS_BUT_LINE_FEED, escape);
