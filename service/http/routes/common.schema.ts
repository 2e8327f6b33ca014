// Building blocks of the response schemas (the `*.schema.ts` files beside each route): the contract's identifier and
// timestamp shapes, and the paging cursor every list may carry. Response schemas describe what the presenters
// return (their return types are z.input of these, so a presenter cannot answer a field the spec does not name) and
// are what the OpenAPI description (http/openapi/) publishes.
import { z } from 'zod';

/** Identifiers are UUID strings (the contract: "UUID-shaped"). */
export const resourceId = (description: string) =>
  z.uuid().meta({ description, example: '3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60' });

/** Timestamps are ISO 8601 UTC strings with milliseconds (Date.toISOString()). */
export const timestamp = (description: string) =>
  z.iso.datetime().meta({ description, example: '2026-01-15T09:30:00.000Z' });

/**
 * Present only when the request gave ?limit=: the cursor of the next page, or null on the last one. Without limit
 * the whole list comes back and there is no cursor.
 */
export const nextCursor = z.string().nullable().optional().meta({
  description:
    'Only when `limit` was given: pass it as `cursor` to get the next page; null on the last page. Absent without `limit` (the whole list is returned).',
  example: 'eyJjIjoiMjAyNi0wMS0xNVQwOTozMDowMC4wMDBaIiwiaSI6IjNmMGMifQ',
});
