// The client end to end: who am I, a knowledge base, a document, a cited answer.
//   KBQA_URL=http://127.0.0.1:8080 KBQA_API_KEY=kbqa_live_… node clients/typescript/example.ts
import { createKbqaClient, dataOf } from './index.ts';

const baseUrl = process.env.KBQA_URL ?? 'http://127.0.0.1:8080';
const apiKey = process.env.KBQA_API_KEY;
if (!apiKey) throw new Error('set KBQA_API_KEY to a key from the web app (Settings → API Keys)');

const kbqa = createKbqaClient(baseUrl, apiKey);

const me = dataOf(await kbqa.GET('/api/v1/me'));
console.log(`acting as ${me.email}`);

const { knowledge_base: kb } = dataOf(
  await kbqa.POST('/api/v1/knowledge-bases', {
    body: { name: 'Client example', description: 'made by clients/typescript/example.ts' },
  }),
);

const { document } = dataOf(
  await kbqa.POST('/api/v1/documents', {
    body: {
      kb_id: kb.id,
      filename: 'onboarding.md',
      content: '# Onboarding\n\nNew starters get their laptop on their first day.',
    },
  }),
);
console.log(`ingested ${document.filename}: ${document.chunks} chunk(s)`);

const answer = dataOf(
  await kbqa.POST('/api/v1/query', {
    body: { query: 'When do new starters get their laptop?', knowledge_base_ids: [kb.id] },
  }),
);
console.log(answer.answer);
for (const [index, citation] of answer.citations.entries())
  console.log(`[${index + 1}] ${citation.title}: ${citation.snippet}`);

// Failures come back as { error } with the response; dataOf throws them as KbqaApiError (status, code, message).
const missing = await kbqa.GET('/api/v1/knowledge-bases/{id}', { params: { path: { id: 'no-such-kb' } } });
console.log(`an unknown KB: ${missing.response.status} ${missing.error?.error.code}`);

dataOf(
  await kbqa.DELETE('/api/v1/knowledge-bases/{id}', { params: { path: { id: kb.id }, query: { permanent: 'true' } } }),
);
