import type { RunEvent } from './api.js';
import { eventSentence, span } from '../../common/texts/event-sentences.js';

export { span };

/** How long ago a time was, from now. */
export const age = (time: string | null, now = Date.now()): string =>
  time === null ? '—' : `${span(now - Date.parse(time))} ago`;

/**
 * One line about an event's data (events hold names, references and fingerprints only: no credential): the
 * sentence scaffolderctl prints too (src/common/texts/event-sentences.ts, the one source of both).
 */
export const eventSummary = (e: RunEvent): string => eventSentence(e.type, e.data);
