// Which queued ingestion jobs a runner claims, and in what order: fair between users, with a cap on each user's and
// each KB's jobs in flight (across every process: the counts come from the job records' leases).
//
// Round-robin by owner: the owners with claimable jobs are ordered by their jobs in flight (fewest first), then by
// their oldest queued job; the order takes one job of each in turn (each owner's oldest first), then a second of
// each, and so on, skipping an owner or a KB at its cap. So one user's thousand queued documents delay another
// user's one by at most a job per slot, not by the thousand.
import { isClaimable, type ScheduledJob } from '../store/ingestJobs.ts';

export interface FairShare {
  /** Jobs of one user in flight at most (KBQA_INGEST_MAX_JOBS_PER_USER). */
  perUser: number;
  /** Jobs of one KB in flight at most (KBQA_INGEST_MAX_JOBS_PER_KB). */
  perKnowledgeBase: number;
}

/** A PDF's version still to be built: it needs the PDF reader first (a retire step does not). */
export function needsPdfReader(job: Pick<ScheduledJob, 'file_id' | 'phase'>): boolean {
  return Boolean(job.file_id) && job.phase === 'build';
}

/**
 * The claimable jobs of `jobs` in the order to claim them, each user and KB at most up to its cap counting what it
 * has in flight, and at most `pdfReadersFree` PDFs still to be read (a PDF claimed without a free reader would wait
 * for one while holding its claim). `ownerOf` maps a KB to its owner (jobs record only their KB).
 */
export function claimOrder(
  jobs: ScheduledJob[],
  ownerOf: (knowledgeBaseId: string) => string,
  now: number,
  leaseMs: number,
  share: FairShare,
  pdfReadersFree = Number.POSITIVE_INFINITY,
): ScheduledJob[] {
  const inFlightByOwner = new Map<string, number>();
  const inFlightByKnowledgeBase = new Map<string, number>();
  const queuedByOwner = new Map<string, ScheduledJob[]>();
  const count = (counts: Map<string, number>, key: string) => counts.get(key) ?? 0;
  const bump = (counts: Map<string, number>, key: string) => counts.set(key, count(counts, key) + 1);
  for (const job of jobs) {
    const owner = ownerOf(job.knowledge_base_id);
    if (isClaimable(job, now, leaseMs)) {
      const queue = queuedByOwner.get(owner) ?? [];
      queue.push(job);
      queuedByOwner.set(owner, queue);
    } else if (job.lease_until !== null) {
      // Held (or lapsed within the claim margin): in flight. A job backing off after a failure is neither.
      bump(inFlightByOwner, owner);
      bump(inFlightByKnowledgeBase, job.knowledge_base_id);
    }
  }
  const owners = [...queuedByOwner.entries()].map(([owner, queue]) => ({
    owner,
    queue: queue.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()),
    oldest: queue[0].created_at.getTime(),
  }));
  owners.sort((a, b) => count(inFlightByOwner, a.owner) - count(inFlightByOwner, b.owner) || a.oldest - b.oldest);

  let pdfsLeft = pdfReadersFree;
  const eligible = (job: ScheduledJob) =>
    count(inFlightByKnowledgeBase, job.knowledge_base_id) < share.perKnowledgeBase &&
    (pdfsLeft > 0 || !needsPdfReader(job));
  const order: ScheduledJob[] = [];
  for (let taken = true; taken;) {
    taken = false;
    for (const { owner, queue } of owners) {
      if (count(inFlightByOwner, owner) >= share.perUser) continue;
      const index = queue.findIndex(eligible);
      if (index < 0) continue;
      const [job] = queue.splice(index, 1);
      if (needsPdfReader(job)) pdfsLeft -= 1;
      order.push(job);
      bump(inFlightByOwner, owner);
      bump(inFlightByKnowledgeBase, job.knowledge_base_id);
      taken = true;
    }
  }
  return order;
}

/**
 * How many documents each queued job waits behind (issue 24 §2), for a person watching it: the queued jobs the fair
 * order takes before it that need what it needs (a PDF to be read: the reader; any other: a slot), those held back by
 * a cap coming after the rest, oldest first; and for a PDF, the `pdfsReading` being read now. An estimate, as the
 * order changes with every claim; it never counts what does not stand in the job's way.
 */
export function documentsAhead(
  jobs: ScheduledJob[],
  ownerOf: (knowledgeBaseId: string) => string,
  now: number,
  leaseMs: number,
  share: FairShare,
  pdfsReading: number,
): Map<string, number> {
  const ordered = claimOrder(jobs, ownerOf, now, leaseMs, share);
  const inOrder = new Set(ordered.map((job) => job._id));
  const heldBack = jobs
    .filter((job) => isClaimable(job, now, leaseMs) && !inOrder.has(job._id))
    .sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  const ahead = new Map<string, number>();
  let pdfsBefore = pdfsReading;
  let othersBefore = 0;
  for (const job of [...ordered, ...heldBack]) {
    if (needsPdfReader(job)) {
      ahead.set(job._id, pdfsBefore);
      pdfsBefore += 1;
    } else {
      ahead.set(job._id, othersBefore);
      othersBefore += 1;
    }
  }
  return ahead;
}

/**
 * KB → owner, read once per KB (by `_id`) and remembered: a KB's owner does not change. A KB that is gone counts as
 * its own owner (its jobs are cancelled when they run). Bounded: KBs come and go over a process's life.
 */
export function knowledgeBaseOwners(find: (knowledgeBaseId: string) => Promise<{ owner_id: string } | null>) {
  const owners = new Map<string, string>();
  return {
    ownerOf: (knowledgeBaseId: string) => owners.get(knowledgeBaseId) ?? `knowledge base ${knowledgeBaseId}`,
    /** Reads the owners of the KBs not known yet; false when every one was known (nothing read). */
    async learn(knowledgeBaseIds: string[]): Promise<boolean> {
      const unknown = [...new Set(knowledgeBaseIds)].filter((id) => !owners.has(id));
      if (unknown.length === 0) return false;
      if (owners.size + unknown.length > 10_000) owners.clear();
      for (const id of unknown) owners.set(id, (await find(id))?.owner_id ?? `knowledge base ${id}`);
      return true;
    },
  };
}
