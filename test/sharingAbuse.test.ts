// Issue 31, findings 6 and 7: sharing by email must not tell whether an account exists, is throttled per sender,
// and invitations are bounded (per sender, per address), a decline sticks, a person can block (and unblock) a
// sender, and pending invitations stay out of the list of KBs (in both realms), listed apart with their sender.
import { createApiKey } from '../service/commands/apiKeys.ts';
import { makeUser, makeWebUser, TEST_PASSWORD, uniqueEmail } from './factories/accounts.ts';
import { serveVariant, testWithApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/webClient.ts';

const test = testWithApp();

type Sharing = Partial<TestApp['deps']['config']['knowledgeBases']['sharing']>;

/** The app with other sharing limits, on a port of its own (same database). */
async function withSharing(t: { teardown(fn: () => Promise<void>): void }, app: TestApp, sharing: Sharing) {
  const variant = await serveVariant(app.deps, (config) => ({
    ...config,
    knowledgeBases: { ...config.knowledgeBases, sharing: { ...config.knowledgeBases.sharing, ...sharing } },
  }));
  t.teardown(() => variant.close());
  return variant.baseUrl;
}

/** A person signed in to the web app at `baseUrl`, with an API key too. */
async function person(app: TestApp, baseUrl: string, label: string) {
  const user = await makeWebUser(app.deps.store, { label });
  const web = new WebClient(baseUrl);
  await web.signIn(user.email, TEST_PASSWORD);
  const { key } = await createApiKey(app.deps.store, user.email, 'test');
  return { ...user, web, key };
}

type Person = Awaited<ReturnType<typeof person>>;

async function newKb(owner: Person, name: string): Promise<string> {
  const created = await owner.web.call('POST', '/api/web/knowledge-bases', { body: { name } });
  if (created.status !== 201) throw new Error(`create failed: ${created.status}`);
  return created.body.knowledge_base.id;
}

const share = (owner: Person, kbId: string, email: string) =>
  owner.web.call('POST', `/api/web/knowledge-bases/${kbId}/sharing/users`, { body: { email } });

async function invitationsOf(recipient: Person): Promise<{ knowledge_base: { id: string } }[]> {
  const listed = await recipient.web.call('GET', '/api/web/invitations');
  if (listed.status !== 200) throw new Error(`invitations: ${listed.status}`);
  return listed.body.invitations;
}

const invitedKbIds = async (recipient: Person) =>
  (await invitationsOf(recipient)).map((invitation) => invitation.knowledge_base.id).sort();

test('finding 6: sharing answers the same for an address with and without an account, and the list shows both alike', async (t) => {
  const { app } = t.context;
  const alice = await person(app, app.baseUrl, 'alice');
  const bob = await makeUser(app.deps.store, { label: 'bob' });
  const kb = await newKb(alice, 'Handbook');
  const nobody = uniqueEmail('nobody');

  const existing = await share(alice, kb, bob.email.toUpperCase());
  const missing = await share(alice, kb, nobody);
  t.deepEqual([existing.status, existing.body], [202, { invitation: { email: bob.email } }]);
  t.deepEqual([missing.status, missing.body], [202, { invitation: { email: nobody } }]);
  t.false(JSON.stringify(existing.body).includes(bob.id), 'no account id in the answer');

  const sharing = (await alice.web.call('GET', `/api/web/knowledge-bases/${kb}/sharing`)).body;
  t.deepEqual(sharing.users, [], 'no one has accepted');
  t.deepEqual(
    sharing.invitations.map((invitation: Record<string, unknown>) => [
      invitation.email,
      Object.keys(invitation).sort(),
    ]),
    [
      [bob.email, ['email', 'id', 'invited_at']],
      [nobody, ['email', 'id', 'invited_at']],
    ],
  );
  t.false(JSON.stringify(sharing).includes(bob.id), 'the list does not give the account away either');

  // Sharing again, as Bob accepts: the owner now sees him as a person (he answered).
  t.is((await share(alice, kb, bob.email)).status, 202);
  t.is((await app.call('POST', `/api/v1/knowledge-bases/${kb}/membership/accept`, { key: bob.key })).status, 200);
  const after = (await alice.web.call('GET', `/api/web/knowledge-bases/${kb}/sharing`)).body;
  t.deepEqual(after.users, [{ id: bob.id, email: bob.email, pending: false }]);
  t.deepEqual(
    after.invitations.map((invitation: { email: string }) => invitation.email),
    [nobody],
  );
});

test('finding 6: share requests are throttled per sender: beyond the limit 429 with Retry-After, nothing sent', async (t) => {
  const { app } = t.context;
  const baseUrl = await withSharing(t, app, { maxPerWindow: 3 });
  const alice = await person(app, baseUrl, 'alice-throttle');
  const carol = await person(app, baseUrl, 'carol-throttle');
  const bob = await person(app, baseUrl, 'bob-throttle');
  const kb = await newKb(alice, 'Probe');
  for (let index = 0; index < 3; index += 1) t.is((await share(alice, kb, uniqueEmail('probe'))).status, 202);

  const limited = await share(alice, kb, bob.email);
  t.is(limited.status, 429);
  t.is(limited.body.error.code, 'rate_limited');
  t.regex(limited.body.error.message, /at most 3 per \d+ minutes \(KBQA_SHARE_MAX_PER_WINDOW\); try again in \d+/);
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= app.deps.config.web.signIn.windowMs / 1000, `Retry-After ${retryAfter}`);
  t.deepEqual(await invitedKbIds(bob), [], 'the refused request sent nothing');
  // Per sender: someone else shares on.
  t.is((await share(carol, await newKb(carol, 'Other'), bob.email)).status, 202);
});

test('finding 7: pending invitations stay out of both lists of KBs and are listed apart, with who shared them and when', async (t) => {
  const { app } = t.context;
  const alice = await person(app, app.baseUrl, 'alice');
  const bob = await person(app, app.baseUrl, 'bob');
  const ids: string[] = [];
  for (let index = 0; index < 5; index += 1) {
    const kb = await newKb(alice, `URGENT: your kbqa account is suspended ${index}`);
    t.is((await share(alice, kb, bob.email)).status, 202);
    ids.push(kb);
  }
  const v1 = (await app.call('GET', '/api/v1/knowledge-bases', { key: bob.key })).body.knowledge_bases;
  const web = (await bob.web.call('GET', '/api/web/knowledge-bases')).body.knowledge_bases;
  for (const [realm, listed] of [
    ['v1', v1],
    ['web', web],
  ] as const) {
    t.deepEqual(
      listed.map((item: { id: string }) => item.id),
      [bob.defaultKnowledgeBaseId],
      `${realm}: only his own KB`,
    );
  }
  const invitations = await invitationsOf(bob);
  t.deepEqual(invitations.map((invitation) => invitation.knowledge_base.id).sort(), [...ids].sort());
  t.like(invitations[0], { shared_by: { id: alice.id, email: alice.email } });
  const invitedAt = Date.parse((invitations[0] as unknown as { invited_at: string }).invited_at);
  t.true(Math.abs(Date.now() - invitedAt) < 10 * 60_000, 'when it was shared');

  // Still readable by name, and accepting moves it to both lists.
  t.is(
    (await app.call('GET', `/api/v1/knowledge-bases/${ids[0]}/membership`, { key: bob.key })).body.membership.pending,
    true,
  );
  t.is((await bob.web.call('POST', `/api/web/knowledge-bases/${ids[0]}/membership/accept`)).status, 200);
  const listed = (await app.call('GET', '/api/v1/knowledge-bases', { key: bob.key })).body.knowledge_bases;
  t.true(listed.some((item: { id: string }) => item.id === ids[0]));
  t.is((await invitationsOf(bob)).length, 4);
});

test('finding 7: a decline sticks for that KB and sender; other KBs of the sender still reach the person', async (t) => {
  const { app } = t.context;
  const alice = await person(app, app.baseUrl, 'alice-decline');
  const bob = await person(app, app.baseUrl, 'bob-decline');
  const first = await newKb(alice, 'Declined one');
  await share(alice, first, bob.email);
  t.deepEqual(await invitedKbIds(bob), [first]);
  t.deepEqual((await bob.web.call('DELETE', `/api/web/knowledge-bases/${first}/membership`)).body, { left: true });

  const again = await share(alice, first, bob.email);
  t.deepEqual([again.status, again.body], [202, { invitation: { email: bob.email } }], 'answered as ever');
  t.deepEqual(await invitedKbIds(bob), [], 'the re-share does not reach him');
  t.is((await app.call('GET', `/api/v1/knowledge-bases/${first}`, { key: bob.key })).status, 404);

  const second = await newKb(alice, 'Another one');
  await share(alice, second, bob.email);
  t.deepEqual(await invitedKbIds(bob), [second], 'a decline is for that KB only');
});

test('finding 7: a person blocks a sender (their invitations go, new ones do not arrive) and unblocks them', async (t) => {
  const { app } = t.context;
  const mallory = await person(app, app.baseUrl, 'mallory');
  const carol = await person(app, app.baseUrl, 'carol');
  const bob = await person(app, app.baseUrl, 'bob-block');
  const spam = [await newKb(mallory, 'URGENT 1'), await newKb(mallory, 'URGENT 2')];
  for (const kb of spam) await share(mallory, kb, bob.email);
  const fromCarol = await newKb(carol, 'Team notes');
  await share(carol, fromCarol, bob.email);
  t.is((await invitedKbIds(bob)).length, 3);

  const blocked = await bob.web.call('PUT', `/api/web/blocked-senders/${mallory.id}`);
  t.is(blocked.status, 200);
  t.like(blocked.body.blocked_sender, { user: { id: mallory.id, email: mallory.email } });
  t.deepEqual(await invitedKbIds(bob), [fromCarol], "the sender's invitations are gone, the others stay");
  t.deepEqual(
    (await bob.web.call('GET', '/api/web/blocked-senders')).body.blocked_senders.map(
      (entry: { user: { email: string } }) => entry.user.email,
    ),
    [mallory.email],
  );
  const third = await newKb(mallory, 'URGENT 3');
  t.is((await share(mallory, third, bob.email)).status, 202, 'the sender is not told');
  t.deepEqual(await invitedKbIds(bob), [fromCarol], 'nothing new arrives');
  t.is((await bob.web.call('PUT', `/api/web/blocked-senders/${bob.id}`)).status, 400, 'not oneself');

  t.deepEqual((await bob.web.call('DELETE', `/api/web/blocked-senders/${mallory.id}`)).body, { unblocked: true });
  t.is((await bob.web.call('DELETE', `/api/web/blocked-senders/${mallory.id}`)).status, 404);
  await share(mallory, third, bob.email);
  t.deepEqual(await invitedKbIds(bob), [fromCarol, third].sort(), 'unblocked, invitations reach him again');
});

test('finding 7: pending invitations per sender are bounded, also under concurrent requests; withdrawing frees one', async (t) => {
  const { app } = t.context;
  const baseUrl = await withSharing(t, app, { maxPendingPerSender: 3, maxPerWindow: 1_000 });
  const alice = await person(app, baseUrl, 'alice-bound');
  const kb = await newKb(alice, 'Bounded');
  const answers = await Promise.all(Array.from({ length: 8 }, () => share(alice, kb, uniqueEmail('many'))));
  t.deepEqual(answers.map((answer) => answer.status).sort(), [202, 202, 202, 409, 409, 409, 409, 409]);
  const refused = answers.find((answer) => answer.status === 409)!;
  t.is(refused.body.error.code, 'conflict');
  t.regex(refused.body.error.message, /you have 3 pending.*KBQA_MAX_PENDING_INVITATIONS_PER_SENDER/);
  const sharing = (await alice.web.call('GET', `/api/web/knowledge-bases/${kb}/sharing`)).body;
  t.is(sharing.invitations.length, 3, 'exactly the bound is kept');

  const withdrawn = await alice.web.call(
    'DELETE',
    `/api/web/knowledge-bases/${kb}/sharing/invitations/${sharing.invitations[0].id}`,
  );
  t.deepEqual(withdrawn.body, { withdrawn: true });
  t.is((await share(alice, kb, uniqueEmail('after'))).status, 202, 'a withdrawn invitation frees its place');
});

test('finding 7: pending invitations per address are bounded; an answer frees a place', async (t) => {
  const { app } = t.context;
  const baseUrl = await withSharing(t, app, { maxPendingPerRecipient: 2 });
  const bob = await person(app, baseUrl, 'bob-bound');
  const owners = [
    await person(app, baseUrl, 'owner-a'),
    await person(app, baseUrl, 'owner-b'),
    await person(app, baseUrl, 'owner-c'),
  ];
  const kbs = await Promise.all(owners.map((owner, index) => newKb(owner, `For Bob ${index}`)));
  t.is((await share(owners[0]!, kbs[0]!, bob.email)).status, 202);
  t.is((await share(owners[1]!, kbs[1]!, bob.email)).status, 202);
  const refused = await share(owners[2]!, kbs[2]!, bob.email);
  t.is(refused.status, 409);
  t.regex(refused.body.error.message, /has 2 pending.*KBQA_MAX_PENDING_INVITATIONS_PER_RECIPIENT/);
  t.deepEqual(await invitedKbIds(bob), [kbs[0]!, kbs[1]!].sort());

  t.is((await bob.web.call('DELETE', `/api/web/knowledge-bases/${kbs[0]}/membership`)).status, 200);
  t.is((await share(owners[2]!, kbs[2]!, bob.email)).status, 202, 'his decline freed a place');
  t.deepEqual(await invitedKbIds(bob), [kbs[1]!, kbs[2]!].sort());
});
