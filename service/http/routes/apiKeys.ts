// /api/web/api-keys: a signed-in user's own API keys (Settings → API Keys). The key is in the create response only.
import type Router from '@koa/router';
import type { z } from 'zod';
import { createApiKeyForSession, listApiKeysOfUser, revokeOwnApiKey } from '../../commands/apiKeys.ts';
import { presentApiKey } from '../../presenters/apiKeys.ts';
import { authenticated, newRouter, type AppDeps, type AppState } from '../context.ts';
import { parseInput } from '../validation.ts';
import type { apiKeyListResponse, apiKeyRevokedResponse, createdApiKeyResponse } from './webApp.schema.ts';
import { createApiKeyBody } from './webSession.schema.ts';

export function apiKeyRoutes(deps: AppDeps): Router<AppState> {
  const router = newRouter();

  router.get(
    '/api-keys',
    authenticated(async (ctx, caller) => {
      ctx.body = {
        api_keys: (await listApiKeysOfUser(deps.store, caller.user._id)).map(presentApiKey),
      } satisfies z.input<typeof apiKeyListResponse>;
    }),
  );

  router.post(
    '/api-keys',
    authenticated(async (ctx, caller) => {
      const { name, password } = parseInput(createApiKeyBody, ctx.request.body, 'body');
      const { record, key } = await createApiKeyForSession(
        deps.store,
        deps.config.web,
        caller,
        { name, password },
        ctx.ip,
      );
      ctx.status = 201;
      ctx.body = { api_key: presentApiKey({ ...record, last_used_at: null }), key } satisfies z.input<
        typeof createdApiKeyResponse
      >;
    }),
  );

  router.delete(
    '/api-keys/:id',
    authenticated(async (ctx, caller) => {
      await revokeOwnApiKey(deps.store, caller, ctx.params.id);
      ctx.body = { revoked: true } satisfies z.input<typeof apiKeyRevokedResponse>;
    }),
  );

  return router;
}
