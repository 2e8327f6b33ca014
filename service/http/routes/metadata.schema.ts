// Document metadata (POST / PUT /documents `metadata`) and metadata filters (/query and /search `filters`):
// validated here, once, with messages naming the part and the rule. What the parsed values mean in OpenSearch is
// in search/metadataFilter.ts.
import { z } from 'zod';
import type { DocumentMetadata, FilterScalar, MetadataFilter, MetadataValue } from '../../search/metadataFilter.ts';
import { isoDateInstant } from '../../search/metadataFilter.ts';

export const METADATA_LIMITS = {
  /** Keys per document. */
  keys: 32,
  /** Characters of a key. */
  keyLength: 64,
  /** UTF-8 bytes of one string value, and of each string of an array. */
  valueBytes: 1024,
  /** Strings in an array value. */
  arrayItems: 64,
  /** UTF-8 bytes of the whole object as JSON. */
  totalBytes: 8192,
} as const;

export const FILTER_LIMITS = {
  /** Levels of $and / $or / $not inside one another. */
  depth: 8,
  /** Operator clauses in all (`{ team: "a" }` is one; `{ year: { $gte: 1, $lt: 5 } }` two). */
  conditions: 64,
  /** Values of one $in / $nin. */
  values: 100,
  /** UTF-8 bytes of one string value: a stored string is never longer (METADATA_LIMITS.valueBytes), so none longer can match. */
  valueBytes: METADATA_LIMITS.valueBytes,
  /** UTF-8 bytes of all the filter's string values: with the counts above, what bounds the query sent to OpenSearch. */
  totalValueBytes: 32 * 1024,
} as const;

/** ASCII letters, digits, `_`, `.`, `-`: safe as a field name part, never an operator (those start with `$`). */
const METADATA_KEY = /^[\w.-]{1,64}$/;
const KEY_RULE = 'keys must be 1–64 characters: letters, digits, _, . or -';

export function metadataKeyProblem(key: string): string | null {
  if (!METADATA_KEY.test(key) || key.length > METADATA_LIMITS.keyLength) return KEY_RULE;
  // A JSON body may carry "__proto__" as a key: as an own property it is harmless, copied into an object it is not.
  if (key === '__proto__') return 'is reserved';
  return null;
}

/** A key as it appears in an error message's path: a long invalid key is cut short, an empty one shown as "". */
function shownKey(key: string): string {
  if (key === '') return '""';
  return key.length > 70 ? `${key.slice(0, 64)}…` : key;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function metadataValueProblem(value: unknown): string | null {
  const tooLong = `must be at most ${METADATA_LIMITS.valueBytes} bytes (UTF-8)`;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') > METADATA_LIMITS.valueBytes ? tooLong : null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'must be a finite number';
  if (typeof value === 'boolean') return null;
  if (Array.isArray(value)) {
    if (value.length > METADATA_LIMITS.arrayItems)
      return `must be an array of at most ${METADATA_LIMITS.arrayItems} strings`;
    for (const [index, item] of value.entries()) {
      if (typeof item !== 'string')
        return `must be an array of strings (item ${index} is ${item === null ? 'null' : typeof item})`;
      if (Buffer.byteLength(item, 'utf8') > METADATA_LIMITS.valueBytes) return `item ${index} ${tooLong}`;
    }
    return null;
  }
  return 'must be a string, number, boolean or array of strings (metadata is flat: no nested objects, no null)';
}

/**
 * A document's metadata: a flat object of at most 32 keys; each value a string (an ISO 8601 date is a string that
 * filters can also compare as a date), a finite number, a boolean or an array of at most 64 strings; strings at
 * most 1 KiB each, the whole object at most 8 KiB as JSON.
 */
export const documentMetadata = z
  .unknown()
  .transform((input, context): DocumentMetadata => {
    const fail = (message: string, path: string[] = []) => {
      context.addIssue({ code: 'custom', message, path });
      return z.NEVER;
    };
    if (!isPlainObject(input)) return fail('must be a JSON object of key: value pairs');
    const entries = Object.entries(input);
    if (entries.length > METADATA_LIMITS.keys)
      return fail(`must have at most ${METADATA_LIMITS.keys} keys (it has ${entries.length})`);
    for (const [key, value] of entries) {
      const keyProblem = metadataKeyProblem(key);
      if (keyProblem) return fail(keyProblem, [shownKey(key)]);
      const valueProblem = metadataValueProblem(value);
      if (valueProblem) return fail(valueProblem, [key]);
    }
    const bytes = Buffer.byteLength(JSON.stringify(input), 'utf8');
    if (bytes > METADATA_LIMITS.totalBytes)
      return fail(`must be at most ${METADATA_LIMITS.totalBytes} bytes as JSON (it is ${bytes})`);
    return Object.fromEntries(entries) as Record<string, MetadataValue>;
  })
  .meta({
    id: 'DocumentMetadata',
    description:
      'Flat metadata: at most 32 keys of 1–64 characters (letters, digits, _, . or -); each value a string (at most 1 KiB; an ISO 8601 date string can also be compared as a date), a finite number, a boolean, or an array of at most 64 strings; at most 8 KiB as JSON.',
    override: {
      type: 'object',
      maxProperties: METADATA_LIMITS.keys,
      propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,64}$' },
      additionalProperties: {
        anyOf: [
          { type: 'string', maxLength: METADATA_LIMITS.valueBytes },
          { type: 'number' },
          { type: 'boolean' },
          {
            type: 'array',
            maxItems: METADATA_LIMITS.arrayItems,
            items: { type: 'string', maxLength: METADATA_LIMITS.valueBytes },
          },
        ],
      },
    },
  });

/** A document's metadata as responses show it (`{}` when it has none): what `documentMetadata` accepted. */
export const documentMetadataOutput = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
  .meta({ description: 'The metadata of the searchable version (of a new document: as given); `{}` when none.' });

const FIELD_OPERATORS = ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
type FieldOperator = (typeof FIELD_OPERATORS)[number];
const COMBINATORS = ['$and', '$or', '$not'];

/** Control-flow signal: a rule a filter breaks, at `path`; caught by metadataFilter below, which makes it a zod issue. */
class FilterProblem extends Error {
  readonly path: string[];
  constructor(path: string[], message: string) {
    super(message);
    this.path = path;
  }
}

// A number must be finite: JSON's 1e400 parses to Infinity, which would serialise as null in the query (no bound).
const isScalar = (value: unknown): value is FilterScalar =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';

const VALUE_TOO_LONG = `must be at most ${FILTER_LIMITS.valueBytes} bytes (UTF-8): a stored value is never longer`;

/** A string's UTF-8 bytes, or more than the value limit (without measuring a long one: each character is a byte or more). */
const valueBytes = (value: string): number =>
  value.length > FILTER_LIMITS.valueBytes ? FILTER_LIMITS.valueBytes + 1 : Buffer.byteLength(value, 'utf8');

class FilterParser {
  conditions = 0;
  bytes = 0;

  /** Counts a condition's string values against the filter's total (each already within the value limit). */
  countBytes(path: string[], values: FilterScalar[]): void {
    for (const value of values) if (typeof value === 'string') this.bytes += valueBytes(value);
    if (this.bytes > FILTER_LIMITS.totalValueBytes) {
      throw new FilterProblem(
        path,
        `too many value bytes: a filter's values hold at most ${FILTER_LIMITS.totalValueBytes} bytes (UTF-8) in all`,
      );
    }
  }

  count(path: string[]): void {
    this.conditions += 1;
    if (this.conditions > FILTER_LIMITS.conditions) {
      throw new FilterProblem(
        path,
        `too many conditions: a filter holds at most ${FILTER_LIMITS.conditions} operator clauses in all`,
      );
    }
  }

  /** A filter object: every entry (a key's condition or a combinator) must hold; no entries match everything. */
  filter(input: unknown, path: string[], depth: number): MetadataFilter {
    if (!isPlainObject(input)) throw new FilterProblem(path, 'must be a JSON object (a filter)');
    const parts: MetadataFilter[] = [];
    // An empty filter costs a clause too (a match_all): otherwise { "$or": [{}, {}, …] } would escape the limits.
    if (Object.keys(input).length === 0) this.count(path);
    for (const [key, value] of Object.entries(input)) {
      const at = [...path, shownKey(key)];
      if (key === '$and' || key === '$or') parts.push(this.combination(key, value, at, depth + 1));
      else if (key === '$not') {
        if (depth + 1 > FILTER_LIMITS.depth)
          throw new FilterProblem(at, `nests too deep: at most ${FILTER_LIMITS.depth} levels of $and, $or and $not`);
        parts.push({ op: 'not', filter: this.filter(value, at, depth + 1) });
      } else if (key.startsWith('$')) {
        const hint = (FIELD_OPERATORS as readonly string[]).includes(key)
          ? `; put it under a metadata key: { "<key>": { "${key}": … } }`
          : '';
        throw new FilterProblem(at, `is not an operator here: use ${COMBINATORS.join(', ')} or a metadata key${hint}`);
      } else {
        const keyProblem = metadataKeyProblem(key);
        if (keyProblem) throw new FilterProblem(at, `is not a metadata key (${keyProblem})`);
        parts.push(...this.field(key, value, at));
      }
    }
    return parts.length === 1 ? parts[0] : { op: 'and', filters: parts };
  }

  combination(operator: '$and' | '$or', value: unknown, path: string[], depth: number): MetadataFilter {
    if (depth > FILTER_LIMITS.depth)
      throw new FilterProblem(path, `nests too deep: at most ${FILTER_LIMITS.depth} levels of $and, $or and $not`);
    if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_LIMITS.conditions) {
      throw new FilterProblem(path, `must be a non-empty array of at most ${FILTER_LIMITS.conditions} filters`);
    }
    return {
      op: operator === '$and' ? 'and' : 'or',
      filters: value.map((item, index) => this.filter(item, [...path, String(index)], depth)),
    };
  }

  /** A key's condition: a bare value (shorthand for $eq) or an object of operators, all of which must hold. */
  field(key: string, value: unknown, path: string[]): MetadataFilter[] {
    if (isScalar(value)) {
      this.count(path);
      if (typeof value === 'string' && valueBytes(value) > FILTER_LIMITS.valueBytes)
        throw new FilterProblem(path, VALUE_TOO_LONG);
      this.countBytes(path, [value]);
      return [{ op: 'eq', key, value }];
    }
    if (Array.isArray(value))
      throw new FilterProblem(
        path,
        'must be a string, number or boolean, or an object of operators (to match any of several values use { "$in": [ … ] })',
      );
    if (!isPlainObject(value))
      throw new FilterProblem(
        path,
        `must be a string, number or boolean, or an object of operators (${FIELD_OPERATORS.join(', ')})`,
      );
    const entries = Object.entries(value);
    if (entries.length === 0)
      throw new FilterProblem(path, `must name at least one operator (${FIELD_OPERATORS.join(', ')})`);
    return entries.map(([operator, operand]) => {
      const at = [...path, shownKey(operator)];
      if (!(FIELD_OPERATORS as readonly string[]).includes(operator)) {
        throw new FilterProblem(
          at,
          `is not an operator: use one of ${FIELD_OPERATORS.join(', ')}${operator.startsWith('$') ? '' : ' (metadata is flat: no nested keys)'}`,
        );
      }
      this.count(at);
      const condition = this.condition(key, operator as FieldOperator, operand, at);
      if ('values' in condition) this.countBytes(at, condition.values);
      else if ('value' in condition && typeof condition.value === 'string') this.countBytes(at, [condition.value]);
      return condition;
    });
  }

  condition(key: string, operator: FieldOperator, operand: unknown, path: string[]): MetadataFilter {
    switch (operator) {
      case '$eq':
      case '$ne':
        if (!isScalar(operand)) throw new FilterProblem(path, 'must be a string, number or boolean');
        if (typeof operand === 'string' && valueBytes(operand) > FILTER_LIMITS.valueBytes)
          throw new FilterProblem(path, VALUE_TOO_LONG);
        return { op: operator === '$eq' ? 'eq' : 'ne', key, value: operand };
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand) || operand.length > FILTER_LIMITS.values) {
          throw new FilterProblem(
            path,
            `must be an array of at most ${FILTER_LIMITS.values} strings, numbers or booleans`,
          );
        }
        operand.forEach((item: unknown, index) => {
          if (!isScalar(item)) throw new FilterProblem([...path, String(index)], 'must be a string, number or boolean');
          if (typeof item === 'string' && valueBytes(item) > FILTER_LIMITS.valueBytes)
            throw new FilterProblem([...path, String(index)], VALUE_TOO_LONG);
        });
        return { op: operator === '$in' ? 'in' : 'nin', key, values: operand as FilterScalar[] };
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        const op = operator.slice(1) as 'gt' | 'gte' | 'lt' | 'lte';
        if (typeof operand === 'number') {
          if (!Number.isFinite(operand)) throw new FilterProblem(path, 'must be a finite number or an ISO date');
          return { op, key, value: operand };
        }
        const instant = typeof operand === 'string' ? isoDateInstant(operand) : null;
        if (instant === null)
          throw new FilterProblem(path, 'must be a number or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)');
        return { op, key, value: { date: instant } };
      }
      case '$exists':
        if (typeof operand !== 'boolean') throw new FilterProblem(path, 'must be true or false');
        return { op: 'exists', key, value: operand };
    }
  }
}

/** Parses a filter as a request gives it; throws a FilterProblem naming the part (path) and the rule. */
function parseFilter(input: unknown): MetadataFilter {
  return new FilterParser().filter(input, [], 0);
}

/** A value $eq, $ne, $in and $nin compare with, in the OpenAPI description (maxLength counts characters, a lower bound of bytes). */
const FILTER_SCALAR = {
  anyOf: [
    { type: 'string' as const, maxLength: FILTER_LIMITS.valueBytes },
    { type: 'number' as const },
    { type: 'boolean' as const },
  ],
};

/**
 * A metadata filter, in the operator syntax of Pinecone, Chroma and LangChain: `{ "team": "alpha" }` is
 * `{ "team": { "$eq": "alpha" } }`; $eq $ne $in $nin $gt $gte $lt $lte $exists under a key; several entries in
 * one object all hold; $and and $or take arrays of filters, $not a filter.
 */
export const metadataFilter = z
  .unknown()
  .transform((input, context): MetadataFilter => {
    try {
      return parseFilter(input);
    } catch (error) {
      if (!(error instanceof FilterProblem)) throw error;
      context.addIssue({ code: 'custom', message: error.message, path: error.path });
      return z.NEVER;
    }
  })
  .meta({
    id: 'MetadataFilter',
    description:
      'Metadata filter (Pinecone/Chroma syntax). `{"team": "alpha"}` is shorthand for `{"team": {"$eq": "alpha"}}`. Under a key: $eq, $ne (string, number or boolean), $in, $nin (arrays of at most 100), $gt, $gte, $lt, $lte (a number or an ISO 8601 date), $exists (boolean). Several entries in one object all hold; $and and $or take non-empty arrays of filters, $not a filter. At most 8 levels of nesting and 64 operator clauses; a string value at most 1,024 bytes (UTF-8), all of them at most 32,768.',
    override: {
      type: 'object',
      properties: {
        $and: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/MetadataFilter' } },
        $or: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/MetadataFilter' } },
        $not: { $ref: '#/components/schemas/MetadataFilter' },
      },
      additionalProperties: {
        anyOf: [
          { type: 'string', maxLength: FILTER_LIMITS.valueBytes },
          { type: 'number' },
          { type: 'boolean' },
          {
            type: 'object',
            minProperties: 1,
            additionalProperties: false,
            properties: {
              $eq: FILTER_SCALAR,
              $ne: FILTER_SCALAR,
              $in: { type: 'array', maxItems: FILTER_LIMITS.values, items: FILTER_SCALAR },
              $nin: { type: 'array', maxItems: FILTER_LIMITS.values, items: FILTER_SCALAR },
              $gt: {
                anyOf: [
                  { type: 'number' },
                  { type: 'string', format: 'date-time' },
                  { type: 'string', format: 'date' },
                ],
              },
              $gte: {
                anyOf: [
                  { type: 'number' },
                  { type: 'string', format: 'date-time' },
                  { type: 'string', format: 'date' },
                ],
              },
              $lt: {
                anyOf: [
                  { type: 'number' },
                  { type: 'string', format: 'date-time' },
                  { type: 'string', format: 'date' },
                ],
              },
              $lte: {
                anyOf: [
                  { type: 'number' },
                  { type: 'string', format: 'date-time' },
                  { type: 'string', format: 'date' },
                ],
              },
              $exists: { type: 'boolean' },
            },
          },
        ],
      },
    },
  });
