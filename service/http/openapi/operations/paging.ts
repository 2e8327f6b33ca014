// ?limit=&cursor= as the OpenAPI description shows them: the rules of validation.ts pageQuery, with limit shown as
// the integer it means (on the wire every query value is a string; the route parses it with the same bounds).
import type { pageQuery } from '../../validation.ts';
import { describeFields } from '../shared.ts';

export function documentPaging<T extends typeof pageQuery>(query: T): T {
  return describeFields(query, {
    limit: {
      description: 'Page size, 1–1000. Without it the whole list comes back in one answer (and no `next_cursor`).',
      example: 100,
      override: ({ jsonSchema }) => {
        delete jsonSchema.pattern;
        Object.assign(jsonSchema, { type: 'integer', minimum: 1, maximum: 1000 });
      },
    },
    cursor: { description: 'The `next_cursor` of the previous page (opaque).' },
  });
}
