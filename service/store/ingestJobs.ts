// Ingestion jobs: claimed with a lease, renewed while the holder works, free again when it lapses. See
// jobs/ for what a job does.
//
// A claim is won by inserting a claim token with a unique _id (`${jobId}:${n}` for the job's claim n), not by a
// compare-and-set on the job: FerretDB v1 runs a filtered update as a read, a filter in Go and a write of the whole
// record, so claimers that read the same free job all "win" it (seen: up to 19 of 40 concurrent claimers of one job).
// A unique insert is atomic on both servers. Only the winner then writes the lease to the job.
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import type { IngestJobClaimRecord, IngestJobRecord } from './records.ts';

/** A chunk version retrieval must not serve: chunks of `document_id` with this version. */
export interface HiddenChunkVersion {
  document_id: string;
  version: number;
}

/** Jobs in flight by state: claimable now, backing off after a transient failure, or held under a live lease. */
export interface IngestJobCounts {
  queued: number;
  retry_wait: number;
  running: number;
}

/** What a claimer read of a claimable job (listClaimableJobs). */
export type ClaimCandidate = Pick<
  IngestJobRecord,
  '_id' | 'knowledge_base_id' | 'lease_until' | 'claims' | 'created_at'
>;

/** What the runners' scheduler reads of every job (listJobsToSchedule): enough to claim it, and to count it. */
export type ScheduledJob = ClaimCandidate & Pick<IngestJobRecord, 'not_before' | 'phase' | 'file_id'>;

/** Not held (or its holder's lease lapsed more than claimMarginMs(leaseMs) ago), and its back-off over. */
export function isClaimable(
  job: Pick<IngestJobRecord, 'lease_until' | 'not_before'>,
  now: number,
  leaseMs: number,
): boolean {
  return job.not_before <= now && (job.lease_until === null || job.lease_until < now - claimMarginMs(leaseMs));
}

/**
 * Claim tokens a claimer steps over when each is dead: inserted by a claim that never reached the job (its claimer
 * died in between, or the job record was rewritten over it). More in a row means something else is wrong.
 */
const MAX_DEAD_CLAIMS = 16;

const claimTokenId = (documentId: string, claim: number) => `${documentId}:${claim}`;

/**
 * How long after a lease lapsed before a claimer may take the job. On FerretDB v1 a claim and the old holder's
 * renewal are both read-then-write of the whole record, so both can "succeed" and the last write decides the owner;
 * a holder instead stops itself once its lease has run out (jobs/runner.ts), and this margin lets one that
 * is in the middle of a step reach that check before anyone else starts on the job.
 */
export const claimMarginMs = (leaseMs: number) => Math.max(2_000, Math.floor(leaseMs / 5));

export function ingestJobsStore(collections: Collections) {
  const { ingestJobs, ingestJobClaims } = collections;

  /** Inserts claim token `claim` of the job: 'won'; or it exists: 'dead' (provably never reached the job) or 'taken'. */
  async function insertClaimToken(
    candidate: ClaimCandidate,
    claim: number,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<'won' | 'taken' | 'dead'> {
    const token: IngestJobClaimRecord = {
      _id: claimTokenId(candidate._id, claim),
      job_id: candidate._id,
      knowledge_base_id: candidate.knowledge_base_id,
      claim,
      owner,
      created_at: Date.now(),
    };
    try {
      await storeCall(() => ingestJobClaims.insertOne(token));
      return 'won';
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const existing = await storeCall(() => ingestJobClaims.findOne({ _id: token._id }));
    if (existing === null) return 'taken';
    // The job as read at `now` shows neither this claim nor a lease from it, though a lease from it would have been
    // written when it was inserted: older than a lease, it never reached the job (or is from an earlier job of the
    // same document, deleted without its tokens).
    const dead = existing.created_at <= now - leaseMs || existing.created_at < candidate.created_at.getTime();
    return dead ? 'dead' : 'taken';
  }

  return {
    insertJob: (job: IngestJobRecord) => storeCall(() => ingestJobs.insertOne(job)).then(() => undefined),
    /** The job of a new version; false when the document already has one (someone else's version got there first). */
    async insertNewJob(job: IngestJobRecord): Promise<boolean> {
      try {
        await storeCall(() => ingestJobs.insertOne(job));
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },
    findJob: (documentId: string) => storeCall(() => ingestJobs.findOne({ _id: documentId })),
    /**
     * Jobs nobody holds (or whose holder's lease lapsed more than claimMarginMs(leaseMs) ago) and whose back-off is
     * over. The collection is small.
     */
    listClaimableJobs: (now: number, leaseMs: number): Promise<ClaimCandidate[]> =>
      storeCall(() =>
        ingestJobs
          .find(
            {
              $and: [
                { not_before: { $lte: now } },
                { $or: [{ lease_until: null }, { lease_until: { $lt: now - claimMarginMs(leaseMs) } }] },
              ],
            },
            { projection: { _id: 1, knowledge_base_id: 1, lease_until: 1, claims: 1, created_at: 1 } },
          )
          .sort({ created_at: 1 })
          .limit(100)
          .toArray(),
      ),
    /**
     * Every job, a few fields each, for the scheduler (jobs/scheduling.ts): it needs the claimable ones and
     * those in flight, by user and KB. One read with no filter and no limit: on FerretDB v1 any filter but `_id`
     * equality is applied after reading each record anyway, so this costs about what listClaimableJobs does; and a
     * limit would hide the jobs of every user but the one who queued the first hundred.
     */
    listJobsToSchedule: (): Promise<ScheduledJob[]> =>
      storeCall(() =>
        ingestJobs
          .find(
            {},
            {
              projection: {
                _id: 1,
                knowledge_base_id: 1,
                lease_until: 1,
                claims: 1,
                created_at: 1,
                not_before: 1,
                phase: 1,
                file_id: 1,
              },
            },
          )
          .toArray(),
      ),
    /**
     * Takes a job read claimable at `now` for `leaseMs`, counting the attempt: null when another claimer won it, or
     * its holder renewed or released it meanwhile. Of any number of concurrent claimers, one wins.
     */
    async claimJob(
      candidate: ClaimCandidate,
      owner: string,
      now: number,
      leaseMs: number,
    ): Promise<IngestJobRecord | null> {
      let claim = (candidate.claims ?? 0) + 1;
      for (let dead = 0; ; dead += 1) {
        const outcome = await insertClaimToken(candidate, claim, owner, now, leaseMs);
        if (outcome === 'won') break;
        if (outcome === 'taken' || dead >= MAX_DEAD_CLAIMS) return null;
        claim += 1;
      }
      // Won: nobody else writes this claim. The job may still have moved on since it was read (its holder renewed
      // or released it; it was deleted): then the claim gives up, and takes its token back.
      const result = await storeCall(() =>
        ingestJobs.updateOne(
          { _id: candidate._id, lease_until: candidate.lease_until ?? null },
          { $set: { lease_owner: owner, lease_until: now + leaseMs, claims: claim }, $inc: { attempts: 1 } },
        ),
      );
      if (result.modifiedCount !== 1) {
        await storeCall(() => ingestJobClaims.deleteOne({ _id: claimTokenId(candidate._id, claim) }));
        return null;
      }
      return storeCall(() => ingestJobs.findOne({ _id: candidate._id, lease_owner: owner }));
    },
    /**
     * Extends the holder's lease, read at `now`, to `until`; false when the job is gone (deleted, cancelled), someone
     * else holds it, or the lease already lapsed: past its lease the holder has stopped itself (or is about to), and
     * a claimer may be writing the job this moment, so a lapsed lease is never revived.
     */
    async renewLease(documentId: string, owner: string, now: number, until: number): Promise<boolean> {
      const result = await storeCall(() =>
        ingestJobs.updateOne(
          { _id: documentId, lease_owner: owner, lease_until: { $gte: now } },
          { $set: { lease_until: until } },
        ),
      );
      return result.matchedCount === 1;
    },
    /**
     * Gives the job back: claimable at `notBefore` (now, or after a back-off). `unclaimed`: it never ran, so the
     * claim's attempt is undone. `async`: the request that waited on it was answered already ("stored, follow its
     * status"), so whoever runs it next must treat it as queued (retried on outages, never removed as all-or-nothing).
     */
    async releaseJob(
      documentId: string,
      owner: string,
      notBefore: number,
      options: { unclaimed?: boolean; async?: boolean } = {},
    ): Promise<void> {
      await storeCall(() =>
        ingestJobs.updateOne(
          { _id: documentId, lease_owner: owner },
          {
            $set: {
              lease_owner: null,
              lease_until: null,
              not_before: notBefore,
              ...(options.async ? { mode: 'async' as const } : {}),
            },
            ...(options.unclaimed ? { $inc: { attempts: -1 } } : {}),
          },
        ),
      );
    },
    /** The holder's update of its job (phase, hidden versions, counts); false when it no longer holds it. */
    async updateHeldJob(
      documentId: string,
      owner: string,
      set: Partial<Pick<IngestJobRecord, 'phase' | 'hidden' | 'built'>>,
    ): Promise<boolean> {
      const result = await storeCall(() =>
        ingestJobs.updateOne({ _id: documentId, lease_owner: owner }, { $set: set }),
      );
      return result.matchedCount === 1;
    },
    /**
     * The job and its claim tokens, both at once: one round trip of waiting, not two. A claim racing the delete
     * finds no job and takes its own token back; one that won the job just before (its holder's lease lapsed) may
     * leave its token behind, as may a process dying between the two: `kbqa doctor` reports and removes such
     * tokens. A job outliving its tokens is claimed with a new one.
     */
    async deleteJob(documentId: string): Promise<void> {
      await Promise.all([
        storeCall(() => ingestJobs.deleteOne({ _id: documentId })),
        storeCall(() => ingestJobClaims.deleteMany({ job_id: documentId })),
      ]);
    },
    async deleteJobsOfKnowledgeBase(knowledgeBaseId: string): Promise<void> {
      await storeCall(() => ingestJobs.deleteMany({ knowledge_base_id: knowledgeBaseId }));
      await storeCall(() => ingestJobClaims.deleteMany({ knowledge_base_id: knowledgeBaseId }));
    },
    /** Claim tokens (admin: the doctor looks for those of jobs that are gone). */
    listJobClaims: (knowledgeBaseIds?: string[]) =>
      storeCall(() =>
        ingestJobClaims.find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}).toArray(),
      ),
    async deleteJobClaim(id: string): Promise<void> {
      await storeCall(() => ingestJobClaims.deleteOne({ _id: id }));
    },
    /**
     * For metrics: jobs by state at `now`, from one read of two fields per job (no filter: FerretDB v1 would scan
     * the table for any, and it has no $cond to count in an aggregate), bounded by `maxTimeMs` on the server.
     */
    async countJobsByState(now: number, maxTimeMs: number): Promise<IngestJobCounts> {
      const jobs = await storeCall(() =>
        ingestJobs.find({}, { projection: { _id: 0, lease_until: 1, not_before: 1 }, maxTimeMS: maxTimeMs }).toArray(),
      );
      const counts: IngestJobCounts = { queued: 0, retry_wait: 0, running: 0 };
      for (const job of jobs) {
        // A lapsed lease is claimable again (its holder died): queued, as the runners see it.
        if (job.lease_until !== null && job.lease_until !== undefined && job.lease_until >= now) counts.running += 1;
        else if (job.not_before > now) counts.retry_wait += 1;
        else counts.queued += 1;
      }
      return counts;
    },
    /** Every job in flight (admin views: doctor, reindex progress). */
    listJobs: (knowledgeBaseIds?: string[]) =>
      storeCall(() =>
        ingestJobs.find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}).toArray(),
      ),
    /** The chunk versions a query of these KBs must exclude: one small read per query. */
    async listHiddenChunkVersions(knowledgeBaseIds: string[]): Promise<HiddenChunkVersion[]> {
      if (knowledgeBaseIds.length === 0) return [];
      const jobs = await storeCall(() =>
        ingestJobs
          .find({ knowledge_base_id: { $in: knowledgeBaseIds } }, { projection: { _id: 1, hidden: 1 } })
          .toArray(),
      );
      return jobs.flatMap((job) => job.hidden.map((version) => ({ document_id: job._id, version })));
    },
  };
}
