// Who may do what to a knowledge base (service/policies/): every role, the 404-versus-403 rule, restores within the
// retention period, and the default search scope of shares. Pure functions over records built here.
import test from 'ava';
import { authorizeAdministration } from '../../service/policies/accounts.ts';
import {
  authorizeCurateLibrary,
  authorizeLeave,
  authorizeManage,
  authorizePermanentDelete,
  authorizeQuery,
  authorizeRead,
  authorizeRestore,
  authorizeWriteDocuments,
  inDefaultScope,
  isPendingShare,
  roleOf,
} from '../../service/policies/knowledgeBases.ts';
import type { KnowledgeBaseRecord, Principal } from '../../service/store/index.ts';

const OWNER: Principal = { _id: 'owner', email: 'owner@example.com', organisation_id: null };
const VIEWER: Principal = { _id: 'viewer', email: 'viewer@example.com', organisation_id: null };
const COLLEAGUE: Principal = { _id: 'colleague', email: 'colleague@example.com', organisation_id: 'org-1' };
const STRANGER: Principal = { _id: 'stranger', email: 'stranger@example.com', organisation_id: 'org-2' };

function kb(change: Partial<KnowledgeBaseRecord> = {}): KnowledgeBaseRecord {
  return {
    _id: 'kb-1',
    owner_id: OWNER._id,
    name: 'Handbook',
    description: '',
    is_default: false,
    is_library: false,
    shared_user_ids: [],
    accepted_user_ids: [],
    shared_organisation_ids: [],
    created_at: new Date('2026-01-01T00:00:00Z'),
    deleted_at: null,
    ...change,
  };
}

/** The HTTP status an authorization failure maps to (403 or 404), or 'allowed'. */
function outcome(check: () => unknown): number | 'allowed' {
  try {
    check();
    return 'allowed';
  } catch (error) {
    return (error as { status: number }).status;
  }
}

test('roleOf: owner, then viewer, then organisation member, then library; nothing for a stranger', (t) => {
  const shared = kb({ shared_user_ids: [VIEWER._id], shared_organisation_ids: ['org-1'], is_library: true });
  t.is(roleOf(OWNER, shared), 'owner');
  t.is(roleOf(VIEWER, shared), 'viewer');
  t.is(roleOf(COLLEAGUE, shared), 'org-member');
  t.is(roleOf(STRANGER, shared), 'library');
  t.is(roleOf(STRANGER, kb()), null);
});

test('roleOf: a soft-deleted KB has no role for anyone, its owner included', (t) => {
  const deleted = kb({ deleted_at: new Date(), is_library: true, shared_user_ids: [VIEWER._id] });
  t.is(roleOf(OWNER, deleted), null);
  t.is(roleOf(VIEWER, deleted), null);
  t.is(roleOf(STRANGER, deleted), null);
});

test('roleOf: a user without an organisation never matches an organisation share', (t) => {
  t.is(roleOf({ ...VIEWER, organisation_id: null }, kb({ shared_organisation_ids: ['org-1'] })), null);
});

test('inDefaultScope: a share is searched by default only once its recipient accepted it', (t) => {
  t.false(inDefaultScope(VIEWER, kb({ shared_user_ids: [VIEWER._id] })));
  t.true(inDefaultScope(VIEWER, kb({ shared_user_ids: [VIEWER._id], accepted_user_ids: [VIEWER._id] })));
  t.false(
    inDefaultScope(VIEWER, kb({ shared_user_ids: [VIEWER._id], accepted_user_ids: undefined })),
    'records older than invitations: pending',
  );
});

test('inDefaultScope: own, organisation and library KBs are in scope; deleted and unrelated ones are not', (t) => {
  t.true(inDefaultScope(OWNER, kb()));
  t.true(inDefaultScope(COLLEAGUE, kb({ shared_organisation_ids: ['org-1'] })));
  t.true(inDefaultScope(STRANGER, kb({ is_library: true })));
  t.false(inDefaultScope(STRANGER, kb()));
  t.false(inDefaultScope(OWNER, kb({ deleted_at: new Date() })));
});

test('isPendingShare: a direct share not yet accepted, and nothing else', (t) => {
  t.true(isPendingShare(VIEWER, kb({ shared_user_ids: [VIEWER._id] })));
  t.false(isPendingShare(VIEWER, kb({ shared_user_ids: [VIEWER._id], accepted_user_ids: [VIEWER._id] })));
  t.false(isPendingShare(OWNER, kb()));
  t.false(isPendingShare(STRANGER, kb({ is_library: true })));
});

test('authorizeRead: any role reads; an unknown id and an invisible KB are both 404', (t) => {
  t.is(authorizeRead(VIEWER, kb({ shared_user_ids: [VIEWER._id] }), 'kb-1'), 'viewer');
  t.is(
    outcome(() => authorizeRead(STRANGER, kb(), 'kb-1')),
    404,
  );
  t.is(
    outcome(() => authorizeRead(STRANGER, null, 'kb-1')),
    404,
  );
});

test('authorizeRead: the 404 names the id asked for', (t) => {
  const error = t.throws(() => authorizeRead(STRANGER, null, 'kb-unknown'));
  t.regex(error?.message ?? '', /kb-unknown/);
});

test('authorizeManage: the owner manages; a KB visible but not owned is 403, an invisible one 404', (t) => {
  t.is(
    outcome(() => authorizeManage(OWNER, kb(), 'kb-1')),
    'allowed',
  );
  t.is(
    outcome(() => authorizeManage(VIEWER, kb({ shared_user_ids: [VIEWER._id] }), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeManage(STRANGER, kb({ is_library: true }), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeManage(STRANGER, kb(), 'kb-1')),
    404,
  );
});

test('authorizeLeave: only a direct share can be left; the owner and organisation members are 403, strangers 404', (t) => {
  t.is(
    outcome(() => authorizeLeave(VIEWER, kb({ shared_user_ids: [VIEWER._id] }), 'kb-1')),
    'allowed',
  );
  t.is(
    outcome(() => authorizeLeave(OWNER, kb(), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeLeave(COLLEAGUE, kb({ shared_organisation_ids: ['org-1'] }), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeLeave(STRANGER, kb({ is_library: true }), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeLeave(STRANGER, kb(), 'kb-1')),
    404,
  );
});

test('authorizeLeave: the owner is told to delete instead', (t) => {
  t.regex(t.throws(() => authorizeLeave(OWNER, kb(), 'kb-1'))?.message ?? '', /delete it instead/);
});

test('authorizeRestore: the owner within the retention period only; everything else is 404', (t) => {
  const day = 86_400_000;
  const deletedAt = new Date('2026-03-01T00:00:00Z');
  const deleted = kb({ deleted_at: deletedAt });
  const now = deletedAt.getTime() + day;
  t.is(
    outcome(() => authorizeRestore(OWNER, deleted, 'kb-1', 2 * day, now)),
    'allowed',
  );
  t.is(
    outcome(() => authorizeRestore(OWNER, deleted, 'kb-1', day, now)),
    404,
    'retention ends exactly at deleted_at + retention',
  );
  t.is(
    outcome(() =>
      authorizeRestore(VIEWER, kb({ deleted_at: deletedAt, shared_user_ids: [VIEWER._id] }), 'kb-1', 2 * day, now),
    ),
    404,
  );
  t.is(
    outcome(() => authorizeRestore(OWNER, kb(), 'kb-1', 2 * day, now)),
    404,
    'a live KB has nothing to restore',
  );
  t.is(
    outcome(() => authorizeRestore(OWNER, null, 'kb-1', 2 * day, now)),
    404,
  );
});

test('authorizePermanentDelete: the owner may erase a KB already soft-deleted; others see 404', (t) => {
  const deleted = kb({ deleted_at: new Date() });
  t.is(
    outcome(() => authorizePermanentDelete(OWNER, deleted, 'kb-1')),
    'allowed',
  );
  t.is(
    outcome(() => authorizePermanentDelete(OWNER, kb(), 'kb-1')),
    'allowed',
  );
  t.is(
    outcome(() =>
      authorizePermanentDelete(VIEWER, kb({ deleted_at: new Date(), shared_user_ids: [VIEWER._id] }), 'kb-1'),
    ),
    404,
  );
  t.is(
    outcome(() => authorizePermanentDelete(VIEWER, kb({ shared_user_ids: [VIEWER._id] }), 'kb-1')),
    403,
  );
});

test('authorizeWriteDocuments: only the owner writes; every other id is 403, visible or not, existing or not', (t) => {
  t.is(
    outcome(() => authorizeWriteDocuments(OWNER, kb(), 'kb-1')),
    'allowed',
  );
  t.is(
    outcome(() => authorizeWriteDocuments(VIEWER, kb({ shared_user_ids: [VIEWER._id] }), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeWriteDocuments(STRANGER, kb(), 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeWriteDocuments(STRANGER, null, 'kb-1')),
    403,
  );
  t.is(
    outcome(() => authorizeWriteDocuments(OWNER, kb({ deleted_at: new Date() }), 'kb-1')),
    403,
  );
});

test('authorizeQuery: every named KB readable, ids returned once each in the order given', (t) => {
  const mine = kb({ _id: 'a' });
  const library = kb({ _id: 'b', owner_id: 'someone', is_library: true });
  t.deepEqual(authorizeQuery(OWNER, ['b', 'a', 'b'], [mine, library]), ['b', 'a']);
});

test('authorizeQuery: 403 naming the first KB that is not readable or not found', (t) => {
  const mine = kb({ _id: 'a' });
  const hidden = kb({ _id: 'c', owner_id: 'someone' });
  const error = t.throws(() => authorizeQuery(OWNER, ['a', 'c', 'missing'], [mine, hidden]));
  t.is((error as unknown as { status: number }).status, 403);
  t.regex(error?.message ?? '', /\bc\b/);
  t.is(
    outcome(() => authorizeQuery(OWNER, ['a', 'missing'], [mine])),
    403,
  );
});

test('library curation and account administration are for administrators only (403 otherwise)', (t) => {
  t.is(
    outcome(() => authorizeCurateLibrary({ isAdmin: true })),
    'allowed',
  );
  t.is(
    outcome(() => authorizeCurateLibrary({ isAdmin: false })),
    403,
  );
  t.is(
    outcome(() => authorizeAdministration({ isAdmin: true })),
    'allowed',
  );
  t.is(
    outcome(() => authorizeAdministration({ isAdmin: false })),
    403,
  );
});
