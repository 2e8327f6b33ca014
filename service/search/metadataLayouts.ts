// How a chunk index stores document metadata, by its template version, and the filter clauses, writes and copies
// each layout takes.
//
// Template v2 on: `<key>=<value>` keywords, one field per JSON type, so keys are values and the mapping is the same
// whatever keys tenants give (v1 added a field per key and type to the shared mapping, which one tenant could fill):
//   metadata.str   team=alpha                   a string, or each string of an array, as given
//   metadata.num   year=c09fa00000000000        a finite number as 16 hex digits that sort as the numbers do
//   metadata.bool  draft=false
//   metadata.date  published=2024-05-01T00:00:00.000Z   an ISO date string (also under str) as its UTC instant
// A key never holds `=` (keys are letters, digits, `_`, `.`, `-`), so a key and its value stay paired, and all of a
// key's values sort between `<key>=` and `<key>>` (`>` follows `=`; no other key's values fall between): a range
// on numbers or dates is a keyword range there, exact because the encodings sort as the values do. Why not a nested
// field of { key, value } entries: in OpenSearch 3.6 a nested field anywhere in the mapping leaves the hybrid
// query's explanation without its k-NN side (every `vector_rank` null, measured), and costs a hidden document per
// key and chunk. Why not `flat_object`: its ranges compare strings ("10" < "9", measured).
//
// Template v1: a field per key and type (metadata.<type>.<key>). A v1 index keeps serving (queries and writes in
// its own layout) until `kbqa index migrate` copies it to the current version; the copy converts each chunk's
// metadata inside OpenSearch (a `_reindex` script), either way, so a rollback to a kept v1 index catches up too.
import type { FilterScalar, MetadataEntry, MetadataLayout, MetadataType } from './metadataFilter.ts';
import { valuesByType } from './metadataFilter.ts';

const TYPES: readonly MetadataType[] = ['str', 'num', 'bool', 'date'];

/** The first template version whose metadata is `<key>=<value>` keywords. */
const FIRST_PAIRS_VERSION = 2;

/** One clause, or any of several. */
const anyOf = (clauses: object[]): object =>
  clauses.length === 1 ? clauses[0] : { bool: { should: clauses, minimum_should_match: 1 } };

/** A term for one value, terms for several. */
const termsOf = (field: string, values: unknown[]): object =>
  values.length === 1 ? { term: { [field]: values[0] } } : { terms: { [field]: values } };

const SIGN = 1n << 63n;
const ALL_BITS = (1n << 64n) - 1n;

/**
 * A double as 16 hex digits whose order is the numbers' order: the IEEE 754 bits with the sign bit flipped for a
 * positive number and every bit flipped for a negative one (as Lucene's sortable longs). -0 is 0, as in JSON.
 */
export function sortableNumber(value: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value === 0 ? 0 : value);
  const bits = view.getBigUint64(0);
  return ((bits & SIGN ? ~bits : bits ^ SIGN) & ALL_BITS).toString(16).padStart(16, '0');
}

/** A scalar as its `<key>=<value>` keyword. */
function pair(key: string, value: FilterScalar): string {
  return `${key}=${typeof value === 'number' ? sortableNumber(value) : String(value)}`;
}

/** Template v2 on: `metadata.<type>` keywords of `<key>=<value>`. */
export const KEY_VALUE_PAIRS: MetadataLayout = {
  holdsAnyOf: (key, values) =>
    anyOf(
      [...valuesByType(values)].map(([type, typed]) =>
        termsOf(
          `metadata.${type}`,
          typed.map((value) => pair(key, value)),
        ),
      ),
    ),
  inRange: (key, op, value) => {
    const [field, bound] =
      typeof value === 'object' ? ['metadata.date', `${key}=${value.date}`] : ['metadata.num', pair(key, value)];
    // Only this key's values: from `<key>=` (inclusive) to `<key>>` (exclusive), the bound on the operator's side.
    const range = op === 'gt' || op === 'gte' ? { [op]: bound, lt: `${key}>` } : { gte: `${key}=`, [op]: bound };
    return { range: { [field]: range } };
  },
};

/**
 * A key's part of a v1 field name. OpenSearch reads a dot in a field name as a sub-object, so `a` and `a.b` would
 * collide (a keyword cannot also be an object): a dot is stored as `%2E` (percent-encoding; `%` is never in a key).
 */
const v1FieldKey = (key: string): string => key.replaceAll('.', '%2E');
const v1Field = (type: MetadataType, key: string): string => `metadata.${type}.${v1FieldKey(key)}`;

/** Template v1: `metadata.<type>.<key>`, one field per key and type. */
export const TYPED_FIELDS: MetadataLayout = {
  holdsAnyOf: (key, values) =>
    anyOf([...valuesByType(values)].map(([type, typed]) => termsOf(v1Field(type, key), typed))),
  inRange: (key, op, value) =>
    typeof value === 'object'
      ? { range: { [v1Field('date', key)]: { [op]: value.date } } }
      : { range: { [v1Field('num', key)]: { [op]: value } } },
};

const INDEX_VERSION = /^kbqa-chunks-v(\d{1,6})-/;

/** The template version a concrete chunk index's name carries; null for anything else (the alias itself). */
export function templateVersionOfIndex(index: string): number | null {
  const version = INDEX_VERSION.exec(index)?.[1];
  return version === undefined ? null : Number(version);
}

/** The layout of a concrete chunk index, by the template version its name carries (the alias itself: the current one). */
export function metadataLayoutOf(index: string): MetadataLayout {
  const version = templateVersionOfIndex(index);
  return version !== null && version < FIRST_PAIRS_VERSION ? TYPED_FIELDS : KEY_VALUE_PAIRS;
}

/** Entries as a v2 index takes them: `{ str: ["<key>=<value>", …], num: …, bool: …, date: … }`. */
function keyValuePairs(entries: MetadataEntry[]): Partial<Record<MetadataType, string[]>> {
  const pairs: Partial<Record<MetadataType, string[]>> = {};
  for (const entry of entries) {
    for (const type of TYPES) {
      const value = entry[type];
      if (value !== undefined)
        (pairs[type] ??= []).push(...(Array.isArray(value) ? value : [value]).map((item) => pair(entry.key, item)));
    }
  }
  return pairs;
}

/** Entries as a v1 index takes them: `{ str: { <key>: … }, num: …, bool: …, date: … }`. */
function typedFields(entries: MetadataEntry[]): Partial<Record<MetadataType, Record<string, unknown>>> {
  const typed: Partial<Record<MetadataType, Record<string, unknown>>> = {};
  for (const entry of entries) {
    for (const type of TYPES) if (entry[type] !== undefined) (typed[type] ??= {})[v1FieldKey(entry.key)] = entry[type];
  }
  return typed;
}

// Every chunk of a version shares one entries array: converted once per layout.
const converted = new WeakMap<MetadataEntry[], Map<MetadataLayout, object>>();

/** A chunk's `metadata` as the index it is written to stores it. */
export function metadataForIndex(index: string, entries: MetadataEntry[]): object {
  const layout = metadataLayoutOf(index);
  let byLayout = converted.get(entries);
  if (!byLayout) converted.set(entries, (byLayout = new Map()));
  let stored = byLayout.get(layout);
  if (!stored) byLayout.set(layout, (stored = layout === TYPED_FIELDS ? typedFields(entries) : keyValuePairs(entries)));
  return stored;
}

/** Painless: a double as sortableNumber writes it. */
const SORTABLE_NUMBER = `
String sortableNumber(double value) {
  long bits = Double.doubleToLongBits(value == 0 ? 0.0 : value);
  bits = bits < 0 ? ~bits : bits ^ Long.MIN_VALUE;
  String hex = Long.toHexString(bits);
  while (hex.length() < 16) { hex = '0' + hex; }
  return hex;
}
double numberOf(String hex) {
  long bits = (Long.parseLong(hex.substring(0, 8), 16) << 32) | Long.parseLong(hex.substring(8), 16);
  return Double.longBitsToDouble(bits < 0 ? bits ^ Long.MIN_VALUE : ~bits);
}`;

/** v1 → v2: the typed sub-objects as `<key>=<value>` keywords, in the order of metadata_keys (as ingestion writes them). */
const FIELDS_TO_PAIRS = `${SORTABLE_NUMBER}
def typed = ctx._source.metadata;
def keys = ctx._source.metadata_keys;
if (typed instanceof Map && keys instanceof List) {
  Map pairs = new HashMap();
  for (String type : params.types) {
    def fields = typed.get(type);
    if (!(fields instanceof Map)) { continue; }
    List values = new ArrayList();
    for (def key : keys) {
      def value = fields.get(key.replace('.', '%2E'));
      if (value == null) { continue; }
      List items = value instanceof List ? value : [value];
      for (def item : items) { values.add(key + '=' + (type == 'num' ? sortableNumber(((Number) item).doubleValue()) : String.valueOf(item))); }
    }
    if (!values.isEmpty()) { pairs.put(type, values); }
  }
  ctx._source.metadata = pairs;
}`;

/** v2 → v1 (a rollback's catch-up): the keywords as typed sub-objects (an array where a key has several values). */
const PAIRS_TO_FIELDS = `${SORTABLE_NUMBER}
def pairs = ctx._source.metadata;
if (pairs instanceof Map) {
  Map typed = new HashMap();
  for (String type : params.types) {
    def values = pairs.get(type);
    if (!(values instanceof List)) { continue; }
    Map fields = new HashMap();
    for (def value : values) {
      int split = value.indexOf('=');
      String field = value.substring(0, split).replace('.', '%2E');
      String text = value.substring(split + 1);
      def item = type == 'num' ? numberOf(text) : (type == 'bool' ? text == 'true' : text);
      if (!fields.containsKey(field)) { fields.put(field, item); }
      else if (fields.get(field) instanceof List) { fields.get(field).add(item); }
      else { fields.put(field, new ArrayList([fields.get(field), item])); }
    }
    typed.put(type, fields);
  }
  ctx._source.metadata = typed;
}`;

/** The `_reindex` script that converts chunks' metadata from the source index's layout to the target's; null if they share one. */
export function metadataCopyScript(
  source: string,
  target: string,
): { lang: 'painless'; source: string; params: { types: readonly MetadataType[] } } | null {
  const [from, to] = [metadataLayoutOf(source), metadataLayoutOf(target)];
  if (from === to) return null;
  return {
    lang: 'painless',
    source: from === TYPED_FIELDS ? FIELDS_TO_PAIRS : PAIRS_TO_FIELDS,
    params: { types: TYPES },
  };
}
