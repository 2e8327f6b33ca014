import { z } from 'zod';
import { resourceId } from './common.schema.ts';

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────────────────────
// What presenters/users.ts presentMe returns (typed against it) and the OpenAPI description publishes.

export const meResponse = z
  .object({
    id: resourceId('Id of the user who owns the key'),
    email: z.string().meta({ description: "The user's e-mail address", example: 'ada@example.com' }),
  })
  .meta({ id: 'Me', description: 'The user the API key acts for.' });
