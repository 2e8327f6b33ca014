import type { UserRecord } from '../store/index.ts';

export function presentMe(user: UserRecord) {
  return { id: user._id, email: user.email };
}
