import type { DocumentStatus, Role } from '../api/generated.ts';
import { classNames } from '../lib/format.ts';

const statusLabels: Record<DocumentStatus, string> = {
  queued: 'Queued',
  processing: 'Processing',
  ready: 'Ready',
  failed: 'Failed',
};

export function StatusBadge({ status }: { status: DocumentStatus }) {
  return <span className={classNames('badge', `badge--${status}`)}>{statusLabels[status] ?? status}</span>;
}

const roleTitles: Record<Role, string> = {
  owner: 'You own this knowledge base',
  viewer: 'Shared with you',
  'org-member': 'Shared with your organisation',
  library: 'In the library: every user can read it',
};

/** The role as the API names it (owner, viewer, org-member, library), explained on hover. */
export function RoleBadge({ role }: { role: Role }) {
  return (
    <span className={classNames('badge', `badge--role-${role}`)} title={roleTitles[role]}>
      {role}
    </span>
  );
}

export function Badge({ children, tone = 'neutral' }: { children: string; tone?: 'neutral' | 'accent' | 'danger' }) {
  return <span className={classNames('badge', `badge--${tone}`)}>{children}</span>;
}
