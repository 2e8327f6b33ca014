// Deleting an account (issue 33, §6: a user's conversations go with the user): an administrator's DELETE
// /api/web/admin/users/{id} and `kbqa users delete`. The key is refused, the sessions end, the conversations and their
// messages and feedback leave the store, the KBs are soft-deleted (then purged with their documents by the sweep),
// shares and invitations to and from the account go; another user's conversations stay whole. And `kbqa doctor`
// finds what an interrupted deletion leaves (messages without a conversation, conversations without a user).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { acceptKnowledgeBaseShare, purgeDeletedKnowledgeBases } from '../service/commands/knowledgeBases.ts';
import { inviteToKnowledgeBase } from '../service/commands/shareInvitations.ts';
import { formatDoctorReport, runDoctor } from '../service/operations/doctor.ts';
import type { Principal } from '../service/store/index.ts';
import { makeUser, makeWebUser, TEST_PASSWORD, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';
import { createKb, ingest } from './helpers/documentsApi.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const FERRY = `# Skerry Island Ferry

An adult return ticket costs 12 euros. Children under twelve travel free, and bicycles cost 3 euros each way.`;

/** A user with a conversation of one rated turn about a document of their own. */
async function talking(app: TestApp, user: TestUser) {
  await ingest(app, user.key, user.defaultKnowledgeBaseId, 'ferry.md', FERRY);
  const created = await app.call('POST', '/api/v1/conversations', { key: user.key, body: {} });
  const id = created.body.conversation.id as string;
  const turn = await app.call('POST', `/api/v1/conversations/${id}/messages`, {
    key: user.key,
    body: { query: 'How much is an adult return ticket on the ferry?' },
  });
  if (turn.status !== 200) throw new Error(JSON.stringify(turn.body));
  const rated = await app.call('PUT', `/api/v1/conversations/${id}/messages/${turn.body.message.id}/feedback`, {
    key: user.key,
    body: { rating: 'down', comment: 'too short' },
  });
  if (rated.status !== 200) throw new Error(JSON.stringify(rated.body));
  return id;
}

async function countIn(app: TestApp, collection: string, filter: Record<string, unknown>): Promise<number> {
  const mongo = await MongoClient.connect(app.deps.config.mongodb.url);
  try {
    return await mongo.db().collection(collection).countDocuments(filter);
  } finally {
    await mongo.close();
  }
}

const principal = async (app: TestApp, email: string) => (await app.deps.store.findUserByEmail(email)) as Principal;

test('an administrator deletes an account: its conversations, keys, sessions, KBs, shares and invitations go', async (t) => {
  const { app } = t.context;
  const { store } = app.deps;
  const admin = await makeWebUser(store, { isAdmin: true });
  const victim = await makeUser(store);
  const other = await makeUser(store);
  const victimConversation = await talking(app, victim);
  const otherConversation = await talking(app, other);
  const victimKb = await createKb(app, victim.key, 'Island guide');

  // Shares both ways: the other user's KB shared with the victim (accepted), the victim's KB invites the other, and
  // an invitation of the other user's to the victim still pending.
  const sharing = { ...app.deps.config.knowledgeBases.sharing, windowMs: app.deps.config.web.signIn.windowMs };
  const otherKb = await createKb(app, other.key, 'Other guide');
  const pendingKb = await createKb(app, other.key, 'Pending guide');
  await inviteToKnowledgeBase(store, sharing, await principal(app, other.email), otherKb, victim.email);
  await acceptKnowledgeBaseShare(store, await principal(app, victim.email), otherKb);
  await inviteToKnowledgeBase(store, sharing, await principal(app, other.email), pendingKb, victim.email);
  await inviteToKnowledgeBase(store, sharing, await principal(app, victim.email), victimKb, other.email);
  t.is(await countIn(app, 'share_invitations', { email: victim.email }), 1, 'the pending one');
  t.is(await countIn(app, 'share_invitations', { sender_id: victim.id }), 1);

  const someone = new WebClient(app.baseUrl);
  await someone.signIn((await makeWebUser(store)).email, TEST_PASSWORD);
  t.is((await someone.call('DELETE', `/api/web/admin/users/${victim.id}`)).status, 403, 'admins only');
  const administrator = new WebClient(app.baseUrl);
  await administrator.signIn(admin.email, TEST_PASSWORD);
  const self = await administrator.call('DELETE', `/api/web/admin/users/${admin.id}`);
  t.is(self.status, 403);
  t.is(self.body.error.message, 'an administrator cannot delete their own account');
  t.is((await administrator.call('DELETE', '/api/web/admin/users/3f0c9a52-6d1e-4b8f-9a7c-2e5d8b1f4c60')).status, 404);

  const deleted = await administrator.call('DELETE', `/api/web/admin/users/${victim.id}`);
  t.is(deleted.status, 200, JSON.stringify(deleted.body));
  t.deepEqual(deleted.body, {
    deleted: true,
    api_keys_revoked: 1,
    sessions_ended: 0,
    conversations_deleted: 1,
    knowledge_bases_deleted: 2,
  });

  // The key is refused; the account and its conversations are gone from the store.
  t.is((await app.call('GET', '/api/v1/conversations', { key: victim.key })).status, 401);
  t.is(await store.findUserById(victim.id), null);
  t.is(await countIn(app, 'conversations', { user_id: victim.id }), 0);
  t.is(await countIn(app, 'conversation_messages', { user_id: victim.id }), 0);
  t.is(await countIn(app, 'conversation_messages', { conversation_id: victimConversation }), 0);
  t.is((await store.listRatedAnswers({})).filter((answer) => answer.user_id === victim.id).length, 0);

  // Its KBs: deleted as a KB deletion does (soft), then purged with their documents by the sweep.
  t.is(await store.findLiveKnowledgeBase(victim.defaultKnowledgeBaseId), null);
  t.truthy((await store.findKnowledgeBaseIncludingDeleted(victimKb))?.deleted_at);
  t.is(await countIn(app, 'documents', { knowledge_base_id: victim.defaultKnowledgeBaseId }), 1, 'until the sweep');
  await purgeDeletedKnowledgeBases(store, app.deps.search, 0);
  t.is(await store.findKnowledgeBaseIncludingDeleted(victim.defaultKnowledgeBaseId), null);
  t.is(await countIn(app, 'documents', { knowledge_base_id: victim.defaultKnowledgeBaseId }), 0);

  // Shares with it and invitations to and from it are gone.
  const otherKbRecord = await store.findLiveKnowledgeBase(otherKb);
  t.false(otherKbRecord?.shared_user_ids.includes(victim.id));
  t.false((otherKbRecord?.accepted_user_ids ?? []).includes(victim.id));
  t.is(await countIn(app, 'share_invitations', { email: victim.email }), 0);
  t.is(await countIn(app, 'share_invitations', { sender_id: victim.id }), 0);

  // The other user's conversation is whole: its turn, answer and feedback.
  const intact = await app.call('GET', `/api/v1/conversations/${otherConversation}`, { key: other.key });
  t.is(intact.status, 200);
  t.is(intact.body.conversation.messages.length, 2);
  t.is(intact.body.conversation.messages[1].feedback.rating, 'down');
});

test('kbqa users delete --email: the same deletion from the command line; an unknown address is 1', async (t) => {
  const { app } = t.context;
  const victim = await makeUser(app.deps.store);
  const conversation = await talking(app, victim);
  const env = { ...process.env, KBQA_MONGODB_URL: app.deps.config.mongodb.url };
  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['bin/kbqa.mjs', ...args], { cwd: ROOT, env, timeout: 120_000 });
  const { stdout } = await run('users', 'delete', '--email', victim.email, '--json');
  const printed = JSON.parse(stdout);
  t.is(printed.id, victim.id);
  t.is(printed.conversations_deleted, 1);
  t.is(printed.api_keys_revoked, 1);
  t.is(await countIn(app, 'conversation_messages', { conversation_id: conversation }), 0);
  t.is((await app.call('POST', '/api/v1/query', { key: victim.key, body: { query: 'ferry' } })).status, 401);
  const unknown = await run('users', 'delete', '--email', victim.email).catch((error: { code: number }) => error);
  t.is((unknown as { code: number }).code, 1);
});

test.serial(
  'kbqa doctor: messages whose conversation is gone and conversations of deleted users; --fix removes them',
  async (t) => {
    const { app } = t.context;
    const { store } = app.deps;
    const leaver = await makeUser(store);
    const stays = await makeUser(store);
    const leftBehind = await talking(app, leaver);
    const orphaned = await talking(app, stays);
    const kept = await talking(app, stays);
    // An account deletion interrupted before its conversations went; a turn stored while its conversation was deleted.
    await store.deleteUser(leaver.id);
    const mongo = await MongoClient.connect(app.deps.config.mongodb.url);
    try {
      await mongo.db().collection<{ _id: string }>('conversations').deleteOne({ _id: orphaned });
    } finally {
      await mongo.close();
    }
    const deps = { store, search: app.deps.search };
    const scope = { knowledgeBaseIds: [stays.defaultKnowledgeBaseId] };
    const report = await runDoctor(deps, scope);
    t.false(report.clean);
    t.deepEqual(
      report.conversations_of_deleted_users.filter((finding) => finding.user_id === leaver.id),
      [{ conversation_id: leftBehind, user_id: leaver.id }],
    );
    t.deepEqual(
      report.orphan_messages
        .filter((finding) => finding.conversation_id === orphaned)
        .map((finding) => finding.conversation_id),
      [orphaned, orphaned],
    );
    t.regex(formatDoctorReport(report), /conversation messages whose conversation is gone: [1-9]/);

    const fixed = await runDoctor(deps, { ...scope, fix: true });
    t.true((fixed.fixed?.conversations_removed ?? 0) >= 1);
    t.true((fixed.fixed?.messages_removed ?? 0) >= 2);
    t.is(await countIn(app, 'conversations', { _id: leftBehind }), 0);
    t.is(await countIn(app, 'conversation_messages', { conversation_id: leftBehind }), 0);
    t.is(await countIn(app, 'conversation_messages', { conversation_id: orphaned }), 0);
    const after = await runDoctor(deps, scope);
    t.is(after.orphan_messages.length, 0);
    t.is(after.conversations_of_deleted_users.length, 0);
    // The living user's other conversation is untouched.
    t.is(
      (await app.call('GET', `/api/v1/conversations/${kept}`, { key: stays.key })).body.conversation.messages.length,
      2,
    );
  },
);
