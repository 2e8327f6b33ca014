// The harness itself (helpers/app.ts): the file's app runs on a database of the file's own, named for the file,
// empty when the file starts, and every app or command the file starts later finds it through KBQA_MONGODB_URL.
import { MongoClient } from 'mongodb';
import { loadConfig } from '../service/config.ts';
import { makeUser } from './factories/accounts.ts';
import { startTestApp, testWithApp } from './helpers/app.ts';

const SHARED_DATABASE_URL = loadConfig(process.env).mongodb.url;

const test = testWithApp<{ usersAtStart: number; databaseListed: boolean }>();

test.before(async (t) => {
  const client = await MongoClient.connect(t.context.databaseUrl, { serverSelectionTimeoutMS: 5_000 });
  try {
    t.context.usersAtStart = await client.db().collection('users').countDocuments();
    const { databases } = await client.db().admin().listDatabases();
    t.context.databaseListed = databases.some(
      (database) => database.name === new URL(t.context.databaseUrl).pathname.slice(1),
    );
  } finally {
    await client.close();
  }
});

test("the app runs on a database of the file's own, named for the file, not the stack's shared one", (t) => {
  const { app, databaseUrl } = t.context;
  t.is(app.databaseUrl, databaseUrl);
  t.not(databaseUrl, SHARED_DATABASE_URL);
  t.regex(new URL(databaseUrl).pathname, /^\/kbqa_harness_[0-9a-f]{8}$/);
  t.is(process.env.KBQA_MONGODB_URL, databaseUrl);
});

test("the database is empty when the file starts: no other file's users are in it", (t) => {
  t.is(t.context.usersAtStart, 0);
});

test("another app the file starts shares the file's database", async (t) => {
  const user = await makeUser(t.context.app.deps.store, { label: 'harness' });
  const other = await startTestApp();
  try {
    t.is(other.databaseUrl, t.context.databaseUrl);
    t.is((await other.deps.store.findUserById(user.id))?.email, user.email);
  } finally {
    await other.close();
  }
});

test('the database exists on the server once the app has started', (t) => {
  t.true(t.context.databaseListed);
});
