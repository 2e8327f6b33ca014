// The order in which a runner claims queued jobs (service/jobs/scheduling.ts): round-robin between users,
// caps per user and per KB counting jobs in flight anywhere, and PDFs only while a reader is free. Pure: no stack.
import test from 'ava';
import { claimOrder, documentsAhead } from '../../service/jobs/scheduling.ts';
import type { ScheduledJob } from '../../service/store/ingestJobs.ts';

const NOW = 1_800_000_000_000;
const LEASE_MS = 30_000;
const SHARE = { perUser: 3, perKnowledgeBase: 3 };
/** KB "<owner>-<n>" belongs to <owner>. */
const ownerOf = (knowledgeBaseId: string) => knowledgeBaseId.split('-')[0];

let sequence = 0;
function job(
  id: string,
  knowledgeBaseId: string,
  options: { held?: boolean; pdf?: boolean; backingOff?: boolean } = {},
): ScheduledJob {
  sequence += 1;
  return {
    _id: id,
    knowledge_base_id: knowledgeBaseId,
    lease_until: options.held ? NOW + LEASE_MS : null,
    claims: 0,
    created_at: new Date(NOW - 100_000 + sequence),
    not_before: options.backingOff ? NOW + 5_000 : 0,
    phase: 'build',
    file_id: options.pdf ? `file-${id}` : null,
  };
}

const ids = (jobs: ScheduledJob[]) => jobs.map((each) => each._id);

test('a user who queued first and most does not keep a later user waiting: one job of each in turn, up to the cap', (t) => {
  const jobs = [...Array.from({ length: 10 }, (_, index) => job(`a${index}`, 'alice-1')), job('b0', 'bob-1')];
  t.deepEqual(ids(claimOrder(jobs, ownerOf, NOW, LEASE_MS, SHARE)), ['a0', 'b0', 'a1', 'a2']);
});

test('jobs in flight count against their user and KB: the user with fewer goes first, one at its cap not at all', (t) => {
  const jobs = [
    job('a-held-1', 'alice-1', { held: true }),
    job('a-held-2', 'alice-2', { held: true }),
    job('a0', 'alice-1'),
    job('a1', 'alice-2'),
    job('c-held', 'carol-1', { held: true }),
    job('c0', 'carol-1'),
    job('b0', 'bob-1'),
  ];
  // Bob (none in flight), Carol (one), Alice (two, so one more before her cap of three).
  t.deepEqual(ids(claimOrder(jobs, ownerOf, NOW, LEASE_MS, SHARE)), ['b0', 'c0', 'a0']);
  const capped = [
    job('d-held-1', 'dave-1', { held: true }),
    job('d-held-2', 'dave-1', { held: true }),
    job('d-held-3', 'dave-2', { held: true }),
    job('d0', 'dave-2'),
  ];
  t.deepEqual(ids(claimOrder(capped, ownerOf, NOW, LEASE_MS, SHARE)), [], 'three in flight: none more');
});

test("a KB at its cap is skipped for the same user's other KB; a job backing off is neither queued nor in flight", (t) => {
  const jobs = [
    job('e-held-1', 'erin-1', { held: true }),
    job('e-held-2', 'erin-1', { held: true }),
    job('e0', 'erin-1'),
    job('e1', 'erin-2'),
    job('f-wait', 'frank-1', { backingOff: true }),
  ];
  t.deepEqual(ids(claimOrder(jobs, ownerOf, NOW, LEASE_MS, { perUser: 5, perKnowledgeBase: 2 })), ['e1']);
});

test("PDFs to read only while a reader is free; the same user's text jobs are taken meanwhile", (t) => {
  const jobs = [
    job('p0', 'gina-1', { pdf: true }),
    job('p1', 'gina-1', { pdf: true }),
    job('g0', 'gina-1'),
    job('h0', 'hank-1', { pdf: true }),
  ];
  t.deepEqual(ids(claimOrder(jobs, ownerOf, NOW, LEASE_MS, SHARE, 0)), ['g0']);
  // One reader: Gina's older PDF takes it; Hank's PDF waits, holding nothing; Gina's text goes on.
  t.deepEqual(ids(claimOrder(jobs, ownerOf, NOW, LEASE_MS, SHARE, 1)), ['p0', 'g0']);
  // A replaced PDF's retire step reads nothing: not a PDF to read.
  const retiring = { ...job('p2', 'ivan-1', { pdf: true }), phase: 'retire' as const };
  t.deepEqual(ids(claimOrder([retiring], ownerOf, NOW, LEASE_MS, SHARE, 0)), ['p2']);
});

test('documents ahead: a PDF counts the PDFs being read and those before it in the fair order; text counts text; a capped user comes last', (t) => {
  const jobs = [
    job('a-held', 'alice-1', { held: true, pdf: true }),
    job('a-pdf', 'alice-1', { pdf: true }),
    job('a-text', 'alice-1'),
    job('b-pdf', 'bob-1', { pdf: true }),
    job('b-text', 'bob-1'),
    job('c-pdf', 'carol-1', { pdf: true }),
  ];
  const ahead = documentsAhead(jobs, ownerOf, NOW, LEASE_MS, { perUser: 2, perKnowledgeBase: 3 }, 1);
  // Bob and Carol have nothing in flight: they go before Alice, who has one; her text job is past her cap of 2: last.
  t.deepEqual(Object.fromEntries(ahead), { 'b-pdf': 1, 'c-pdf': 2, 'a-pdf': 3, 'b-text': 0, 'a-text': 1 });
  t.false(ahead.has('a-held'), 'a job in flight is not waiting');
});
