// Who may administer accounts. Admin rights are a web-app role (the first account, or `kbqa users create --admin`).
import { ForbiddenError } from '../errors.ts';

/** Listing users and inviting them: admins only. */
export function authorizeAdministration(caller: { isAdmin: boolean }): void {
  if (!caller.isAdmin) throw new ForbiddenError('only administrators may do this');
}
