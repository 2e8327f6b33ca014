// Who may administer accounts. Admin rights are a web-app role (the first account, or `kbqa users create --admin`).
import { ForbiddenError } from '../errors.ts';

/** Deleting an account: admins only, and never their own (the service would be left to whoever is next). */
export function authorizeAccountDeletion(caller: { isAdmin: boolean; user: { _id: string } }, userId: string): void {
  authorizeAdministration(caller);
  if (caller.user._id === userId) throw new ForbiddenError('an administrator cannot delete their own account');
}

/** Listing users and inviting them: admins only. */
export function authorizeAdministration(caller: { isAdmin: boolean }): void {
  if (!caller.isAdmin) throw new ForbiddenError('only administrators may do this');
}
