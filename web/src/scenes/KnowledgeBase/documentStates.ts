import type { KbDocument } from '../../api/generated.ts';

/** A failure a retry cannot fix (a scanned or broken file, no text): the way on is to remove it. */
export const failedForGood = (document: KbDocument) => document.status === 'failed' && document.retryable === false;

/** What taking a document away is called: Remove for one that failed for good, Delete otherwise. */
export const removalVerb = (document: KbDocument | undefined) =>
  document && failedForGood(document) ? 'Remove' : 'Delete';
