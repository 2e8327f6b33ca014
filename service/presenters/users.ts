import type { Principal } from '../store/index.ts';

export function presentMe(user: Principal) {
  return { id: user._id, email: user.email };
}
