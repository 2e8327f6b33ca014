import type { z } from 'zod';
import type { ListedApiKey } from '../commands/apiKeys.ts';
import type { apiKey } from '../http/routes/webApp.schema.ts';

/** A key as its owner sees it in a list: the masked form only. The key itself appears once, in the create response. */
export function presentApiKey(record: ListedApiKey): z.input<typeof apiKey> {
  return {
    id: record.id,
    name: record.name,
    masked: record.masked,
    created_at: record.created_at.toISOString(),
    last_used_at: record.last_used_at?.toISOString() ?? null,
    revoked_at: record.revoked_at?.toISOString() ?? null,
  };
}
