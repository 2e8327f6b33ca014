import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from '../../commands/passwords.ts';
import { jsonObject, nameCharacterProblem, reportProblem, requiredString } from '../validation.ts';

// An email is shown in listings, shares and the CLI's tables: the names rule keeps escapes and bidi overrides out.
const email = () =>
  requiredString()
    .trim()
    .min(1, 'is required')
    .max(254, 'must be at most 254 characters')
    .superRefine(reportProblem(nameCharacterProblem));
// Length rules of NEW passwords are the command's (commands/passwords.ts); here only the type and a bound.
const password = () => requiredString().max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`);
const token = () => requiredString().max(200, 'is not a link this service issued');

export const credentialsBody = jsonObject({ email: email(), password: password() });
// Revoking every API key of the user: a password change's choice (default no), a link's (default: yes for a reset).
const revokeApiKeys = () => z.boolean({ error: 'must be true or false' });
export const changePasswordBody = jsonObject({
  current_password: password(),
  new_password: password(),
  revoke_api_keys: revokeApiKeys().default(false),
});
export const passwordLinkBody = jsonObject({ token: token() });
export const usePasswordLinkBody = jsonObject({
  token: token(),
  password: password(),
  revoke_api_keys: revokeApiKeys().optional(),
});
/** DELETE /sessions takes its one option in the query string: a DELETE's body has no meaning in HTTP. */
export const signOutEverywhereQuery = z.object({
  revoke_api_keys: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('false')
    .transform((value) => value === 'true'),
});
export const inviteBody = jsonObject({
  email: email(),
  is_admin: z.boolean({ error: 'must be true or false' }).default(false),
});
export const createApiKeyBody = jsonObject({
  name: requiredString()
    .trim()
    .min(1, 'must be 1–100 characters')
    .max(100, 'must be 1–100 characters')
    .superRefine(reportProblem(nameCharacterProblem)),
  // Needed unless this session signed in within KBQA_REAUTH_MINUTES (commands/sessions.ts requireRecentAuthentication).
  password: password().optional(),
});
export const shareWithUserBody = jsonObject({ email: email() });
export const sharedFlagBody = jsonObject({ shared: z.boolean({ error: 'must be true or false' }) });
export const libraryFlagBody = jsonObject({ library: z.boolean({ error: 'must be true or false' }) });
