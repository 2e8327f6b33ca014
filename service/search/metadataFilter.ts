// Document metadata as chunks carry it, and metadata filters as OpenSearch query DSL.
//
// Mapping (index-templates/kbqa-chunks.v1.json, dynamic templates under `metadata`): each key is stored under a
// sub-object named by its JSON type, so two documents that give one key different types never conflict:
//   metadata.str.<key>   keyword   strings, and every element of a string array
//   metadata.num.<key>   double    finite numbers
//   metadata.bool.<key>  boolean
//   metadata.date.<key>  date      strings that are ISO 8601 dates (also kept under metadata.str.<key>, as typed)
// `metadata_keys` (keyword) lists the keys a chunk has, whatever their types: `$exists` reads it.
// The document record keeps the metadata as the caller sent it (`metadata` on the record and in API responses).

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
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
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

type MetadataType = 'str' | 'num' | 'bool' | 'date';

/**
 * A key's part of a field name. OpenSearch reads a dot in a field name as a sub-object, so `a` and `a.b` would
 * collide (a keyword cannot also be an object): a dot is stored as `%2E` (percent-encoding; `%` is never in a key).
 */
export function metadataFieldKey(key: string): string {
  return key.replaceAll('.', '%2E');
}

export function metadataField(type: MetadataType, key: string): string {
  return `metadata.${type}.${metadataFieldKey(key)}`;
}

/** What a chunk carries of its document's metadata: the typed sub-objects, and the keys it has. */
export interface ChunkMetadata {
  metadata?: Partial<Record<MetadataType, Record<string, string | number | boolean | string[]>>>;
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
  const typed: Partial<Record<MetadataType, Record<string, string | number | boolean | string[]>>> = {};
  const put = (type: MetadataType, key: string, value: string | number | boolean | string[]) => {
    (typed[type] ??= {})[metadataFieldKey(key)] = value;
  };
  for (const [key, value] of entries) {
    if (typeof value === 'number') put('num', key, value);
    else if (typeof value === 'boolean') put('bool', key, value);
    else {
      put('str', key, value);
      const dates = (Array.isArray(value) ? value : [value]).map(isoDateInstant).filter((date): date is string => date !== null);
      if (dates.length > 0) put('date', key, Array.isArray(value) ? dates : dates[0]);
    }
  }
  return { metadata: typed, metadata_keys: entries.map(([key]) => key) };
}

function scalarField(key: string, value: FilterScalar): string {
  if (typeof value === 'number') return metadataField('num', key);
  if (typeof value === 'boolean') return metadataField('bool', key);
  return metadataField('str', key);
}

const hasKey = (key: string) => ({ term: { metadata_keys: key } });

/** Any of the values: one `terms` clause per type present (a number never equals a string). */
function anyOf(key: string, values: FilterScalar[]): object {
  const byField = new Map<string, FilterScalar[]>();
  for (const value of values) {
    const field = scalarField(key, value);
    byField.set(field, [...(byField.get(field) ?? []), value]);
  }
  const clauses = [...byField].map(([field, fieldValues]) => ({ terms: { [field]: fieldValues } }));
  if (clauses.length === 0) return MATCH_NONE;
  return clauses.length === 1 ? clauses[0] : { bool: { should: clauses, minimum_should_match: 1 } };
}

const MATCH_NONE = { bool: { must_not: [{ match_all: {} }] } };

/**
 * A filter as OpenSearch query DSL, for a bool `filter` or a k-NN `filter` (no scoring). The semantics:
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
export function metadataFilterQuery(filter: MetadataFilter): object {
  switch (filter.op) {
    case 'and':
      return filter.filters.length === 0 ? { match_all: {} } : { bool: { filter: filter.filters.map(metadataFilterQuery) } };
    case 'or':
      return { bool: { should: filter.filters.map(metadataFilterQuery), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [metadataFilterQuery(filter.filter)] } };
    case 'eq':
      return { term: { [scalarField(filter.key, filter.value)]: filter.value } };
    case 'in':
      return anyOf(filter.key, filter.values);
    case 'ne':
      return { bool: { filter: [hasKey(filter.key)], must_not: [{ term: { [scalarField(filter.key, filter.value)]: filter.value } }] } };
    case 'nin':
      return filter.values.length === 0
        ? hasKey(filter.key)
        : { bool: { filter: [hasKey(filter.key)], must_not: [anyOf(filter.key, filter.values)] } };
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const isDate = typeof filter.value === 'object';
      const field = metadataField(isDate ? 'date' : 'num', filter.key);
      return { range: { [field]: { [filter.op]: typeof filter.value === 'object' ? filter.value.date : filter.value } } };
    }
    case 'exists':
      return filter.value ? hasKey(filter.key) : { bool: { must_not: [hasKey(filter.key)] } };
  }
}
