// Document metadata as chunks carry it, and metadata filters as OpenSearch query DSL.
//
// A chunk carries its document's metadata as entries, one per key, its value under its JSON type: `str` (a string,
// or a string array), `num` (a finite number), `bool`, and `date` for strings that are ISO 8601 dates (as UTC
// instants, beside `str`), so two documents that give one key different types never conflict. How an index stores
// them and what a filter's conditions become there is metadataLayouts.ts: since template v2 as `<key>=<value>`
// keywords, so no key ever becomes a field of the shared mapping. `metadata_keys` (keyword) lists the keys a chunk
// has, whatever their types: `$exists` reads it. The document record keeps the metadata as the caller sent it
// (`metadata` on the record and in API responses).

/** A metadata value as stored and returned: flat, no nesting. */
export type MetadataValue = string | number | boolean | string[];
export type DocumentMetadata = Record<string, MetadataValue>;

/** A value a filter compares with. Dates are given as ISO 8601 strings and compared as instants. */
export type FilterScalar = string | number | boolean;

/**
 * A parsed, validated filter (the request's `filters` after http/routes/metadata.schema.ts). Shorthand is already
 * expanded (`{ team: "alpha" }` is `{ op: "eq", key: "team", value: "alpha" }`) and several keys in one object are
 * an `and`.
 */
export type MetadataFilter =
  | { op: 'and' | 'or'; filters: MetadataFilter[] }
  | { op: 'not'; filter: MetadataFilter }
  | { op: 'eq' | 'ne'; key: string; value: FilterScalar }
  | { op: 'in' | 'nin'; key: string; values: FilterScalar[] }
  | { op: 'gt' | 'gte' | 'lt' | 'lte'; key: string; value: number | { date: string } }
  | { op: 'exists'; key: string; value: boolean };

/**
 * ISO 8601 dates as metadata and filters take them: a calendar date (2024-05-01), or a date and time with minutes,
 * optional seconds and fraction, and an optional offset (Z, +02:00); without an offset the time is UTC, as
 * OpenSearch reads it. Anchored, no nested quantifiers: linear in the input.
 */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** The instant an ISO 8601 date names, as UTC ISO with milliseconds (what is indexed and compared); null if it is none. */
export function isoDateInstant(value: string): string | null {
  const match = ISO_DATE.exec(value);
  if (!match) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = match
    .slice(1, 7)
    .map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const millisecond = match[7] ? Number(match[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  let offsetMinutes = 0;
  const offset = match[8];
  if (offset && offset !== 'Z') {
    const hours = Number(offset.slice(1, 3));
    const minutes = Number(offset.slice(4, 6));
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (offset.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute - offsetMinutes, second, millisecond);
  const time = utc.getTime();
  // OpenSearch's date type holds years 0000–9999 in this format; an offset can push 0000-01-01 before year 0.
  if (!Number.isFinite(time) || utc.getUTCFullYear() < 0 || utc.getUTCFullYear() > 9999) return null;
  return utc.toISOString();
}

export type MetadataType = 'str' | 'num' | 'bool' | 'date';

/** One key of a document's metadata as a chunk carries it: the key, and its value under its type (a date under two). */
export type MetadataEntry = { key: string } & {
  str?: string | string[];
  num?: number;
  bool?: boolean;
  date?: string | string[];
};

/** What a chunk carries of its document's metadata: an entry per key (written as its index's layout has it), and the keys. */
export interface ChunkMetadata {
  metadata?: MetadataEntry[];
  metadata_keys?: string[];
}

/**
 * A document's metadata as its chunks carry it. Strings (and string arrays) go under `str`; those that are ISO
 * dates (each item of an array on its own) also under `date`, as UTC instants; numbers under `num`; booleans under
 * `bool`. An empty array names the key (`$exists`) and matches no value.
 */
export function chunkMetadata(metadata: DocumentMetadata | undefined): ChunkMetadata {
  const entries = Object.entries(metadata ?? {});
  if (entries.length === 0) return {};
  const typed = entries.map(([key, value]): MetadataEntry => {
    if (typeof value === 'number') return { key, num: value };
    if (typeof value === 'boolean') return { key, bool: value };
    const dates = (Array.isArray(value) ? value : [value])
      .map(isoDateInstant)
      .filter((date): date is string => date !== null);
    return dates.length > 0 ? { key, str: value, date: Array.isArray(value) ? dates : dates[0] } : { key, str: value };
  });
  return { metadata: typed, metadata_keys: entries.map(([key]) => key) };
}

/** How an index stores metadata: the clauses a filter's conditions become (metadataLayouts.ts has both layouts). */
export interface MetadataLayout {
  /** Chunks whose key holds any of the values (at least one), each compared within its own type. */
  holdsAnyOf(key: string, values: FilterScalar[]): object;
  /** Chunks whose key holds a number (or an ISO date) in the range. */
  inRange(key: string, op: 'gt' | 'gte' | 'lt' | 'lte', value: number | { date: string }): object;
}

/** The values by the type they are compared in: a number never equals a string. */
export function valuesByType(values: FilterScalar[]): Map<'str' | 'num' | 'bool', FilterScalar[]> {
  const byType = new Map<'str' | 'num' | 'bool', FilterScalar[]>();
  for (const value of values) {
    const type = typeof value === 'number' ? 'num' : typeof value === 'boolean' ? 'bool' : 'str';
    byType.set(type, [...(byType.get(type) ?? []), value]);
  }
  return byType;
}

const hasKey = (key: string) => ({ term: { metadata_keys: key } });

const MATCH_NONE = { bool: { must_not: [{ match_all: {} }] } };

/**
 * A filter as OpenSearch query DSL, for a bool `filter` or a k-NN `filter` (no scoring), in the index's metadata
 * layout (metadataLayouts.ts metadataLayoutOf). The semantics:
 * - `$eq` / `$in`: a chunk whose key holds the value; an array holds each of its items, so it matches when any
 *   item does. Types never mix: the number 5 does not equal the string "5", nor true the string "true". Strings
 *   compare as strings, exactly (an ISO date string equals only the same string).
 * - `$ne` / `$nin`: the key EXISTS and holds none of the values (for an array: no item is one of them). A chunk
 *   without the key does not match; reach those with `$exists: false`, or `$not: { key: { $eq: … } }`.
 * - `$gt` `$gte` `$lt` `$lte`: a number compares with number values; an ISO date with values that are ISO date
 *   strings (or arrays holding some: any item in range), as instants. Other values never match.
 * - `$exists`: whether the document gave the key at all (any type, an empty array included).
 * - A key no document has matches nothing (but `$exists: false` and `$not` of it match every chunk).
 * - Several entries in one object and `$and` all hold; `$or` any; `$not` is the complement (chunks lacking the key
 *   included). `{}` matches every chunk.
 */
export function metadataFilterQuery(filter: MetadataFilter, layout: MetadataLayout): object {
  const query = (part: MetadataFilter) => metadataFilterQuery(part, layout);
  switch (filter.op) {
    case 'and':
      return filter.filters.length === 0 ? { match_all: {} } : { bool: { filter: filter.filters.map(query) } };
    case 'or':
      return { bool: { should: filter.filters.map(query), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [query(filter.filter)] } };
    case 'eq':
      return layout.holdsAnyOf(filter.key, [filter.value]);
    case 'in':
      return filter.values.length === 0 ? MATCH_NONE : layout.holdsAnyOf(filter.key, filter.values);
    case 'ne':
      return { bool: { filter: [hasKey(filter.key)], must_not: [layout.holdsAnyOf(filter.key, [filter.value])] } };
    case 'nin':
      return filter.values.length === 0
        ? hasKey(filter.key)
        : { bool: { filter: [hasKey(filter.key)], must_not: [layout.holdsAnyOf(filter.key, filter.values)] } };
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return layout.inRange(filter.key, filter.op, filter.value);
    case 'exists':
      return filter.value ? hasKey(filter.key) : { bool: { must_not: [hasKey(filter.key)] } };
  }
}
