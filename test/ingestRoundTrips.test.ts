// Issue 26 §2: ingestion at the embedder's speed. What a text document waits on besides the embedder is FerretDB's
// round trips and the chunk index's refreshes; these tests pin how many of each it costs (counts, never times).
import { storeCallsMade } from '../service/store/index.ts';
import { makeUser } from './factories/accounts.ts';
import { testWithApp } from './helpers/app.ts';

// No poll of the job queue during a count: the documents here are the requests' own jobs (the runner's poll at
// start-up is long over by the time a count begins).
const test = testWithApp({ env: { KBQA_JOB_POLL_MS: '60000' } });

const text = (index: number) =>
  `Round trip ${index}. The quokka is a small marsupial of Rottnest Island. It eats grasses and leaves at night.`;

test.serial(
  'a waited-for text document costs 12 store round trips (13 in a test), request and job together',
  async (t) => {
    const { app } = t.context;
    const user = await makeUser(app.deps.store, { label: 'round-trips' });
    const ingest = async (index: number): Promise<string> => {
      const response = await app.call('POST', '/api/v1/documents', {
        key: user.key,
        body: { kb_id: user.defaultKnowledgeBaseId, filename: `quokka-${index}.txt`, content: text(index) },
      });
      t.is(response.status, 201, JSON.stringify(response.body));
      t.is(response.body.document.chunks, 1);
      return response.body.document.id as string;
    };
    // The first document of a user also counts its usage record into being: not the steady state measured.
    await ingest(0);
    const before = storeCallsMade();
    const id = await ingest(1);
    const calls = storeCallsMade() - before;
    // The API key (1); the KB (1); the owner's queued documents (2); the storage reservation (1); content, record and
    // job (3); ready (1); the KB again, beside the job's removal and its claim tokens (3): 12 in a service. A test's
    // runner (claims 'own') reads the job once more as it ends, to forget it: 13 here. Before issue 26 the reservation
    // read its record before its $inc: 13 in a service (and the last three were two round trips of waiting, not one).
    t.is(calls, 13, `${calls} store round trips`);
    // Ready means searchable: the version is visible the moment its request answers.
    const found = await app.call('POST', '/api/v1/search', {
      key: user.key,
      body: { query: 'Round trip 1 quokka', knowledge_base_ids: [user.defaultKnowledgeBaseId], mode: 'bm25' },
    });
    t.is(found.status, 200, JSON.stringify(found.body));
    t.true(found.body.results.some((result: { document_id: string }) => result.document_id === id));
  },
);

test.serial('ingestions ending together share refreshes: 8 at once cost at most 2', async (t) => {
  // Asked at the same moment, as 8 ingestions finishing together would: the first starts a refresh at once, the
  // other 7 share the next one. (Through whole requests the count depends on how far apart the documents finish:
  // on a loaded machine each can end after the previous refresh, which is the group commit working as documented.)
  const { app } = t.context;
  const before = app.deps.search.refreshCount();
  await Promise.all(Array.from({ length: 8 }, () => app.deps.search.chunksSearchable()));
  const refreshes = app.deps.search.refreshCount() - before;
  t.true(refreshes >= 1 && refreshes <= 2, `${refreshes} refreshes for 8 ingestions ending together`);
});
