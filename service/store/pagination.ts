// Keyset pagination over (created_at desc, _id desc): stable under inserts, no skip/offset scans.
import type { Filter } from 'mongodb';
import { InvalidCursorError } from '../errors.ts';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

interface CursorPosition {
  created_at: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.created_at.toISOString(), position.id])).toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string') throw new Error('shape');
    const date = new Date(createdAt);
    if (Number.isNaN(date.getTime())) throw new Error('date');
    return { created_at: date, id };
  } catch {
    throw new InvalidCursorError();
  }
}

/** The filter selecting records strictly after the cursor in newest-first order. */
export function afterCursor<T extends { _id: string; created_at: Date }>(cursor: string): Filter<T> {
  const position = decodeCursor(cursor);
  return {
    $or: [{ created_at: { $lt: position.created_at } }, { created_at: position.created_at, _id: { $lt: position.id } }],
  } as Filter<T>;
}

export const NEWEST_FIRST = { created_at: -1, _id: -1 } as const;

/** Turns limit+1 fetched records into a page and the cursor for the next one. */
export function toPage<T extends { _id: string; created_at: Date }>(records: T[], limit: number | undefined): Page<T> {
  if (limit === undefined || records.length <= limit) return { items: records, nextCursor: null };
  const items = records.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: encodeCursor({ created_at: last.created_at, id: last._id }) };
}
