import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from '../../commands/passwords.ts';
import { jsonObject, nameCharacterProblem, reportProblem, requiredString } from '../validation.ts';

// An email is shown in listings, shares and the CLI's tables: the names rule keeps escapes and bidi overrides out.
const email = () =>
  requiredString().trim().min(1, 'is required').max(254, 'must be at most 254 characters').superRefine(reportProblem(nameCharacterProblem));
// Length rules of NEW passwords are the command's (commands/passwords.ts); here only the type and a bound.
const password = () => requiredString().max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`);
const token = () => requiredString().max(200, 'is not a link this service issued');

export const credentialsBody = jsonObject({ email: email(), password: password() });
export const changePasswordBody = jsonObject({ current_password: password(), new_password: password() });
export const passwordLinkBody = jsonObject({ token: token() });
export const usePasswordLinkBody = jsonObject({ token: token(), password: password() });
export const inviteBody = jsonObject({
  email: email(),
  is_admin: z.boolean({ error: 'must be true or false' }).default(false),
});
export const createApiKeyBody = jsonObject({
  name: requiredString().trim().min(1, 'must be 1–100 characters').max(100, 'must be 1–100 characters').superRefine(reportProblem(nameCharacterProblem)),
});
export const shareWithUserBody = jsonObject({ email: email() });
export const sharedFlagBody = jsonObject({ shared: z.boolean({ error: 'must be true or false' }) });
export const libraryFlagBody = jsonObject({ library: z.boolean({ error: 'must be true or false' }) });
