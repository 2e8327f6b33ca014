// Ingestion jobs: claimed with a lease (compare-and-set on the job's _id, the one filter both servers push down),
// renewed while the holder works, free again when it lapses. See commands/ingestJobs.ts for what a job does.
import type { Collections } from './mongo.ts';
import { storeCall } from './mongo.ts';
import type { IngestJobRecord } from './records.ts';

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

export function ingestJobsStore(collections: Collections) {
  const { ingestJobs } = collections;
  return {
    insertJob: (job: IngestJobRecord) => storeCall(() => ingestJobs.insertOne(job)).then(() => undefined),
    findJob: (documentId: string) => storeCall(() => ingestJobs.findOne({ _id: documentId })),
    /** Jobs nobody holds (or whose holder's lease lapsed) and whose back-off is over. The collection is small. */
    listClaimableJobs: (now: number) =>
      storeCall(() =>
        ingestJobs
          .find(
            { $and: [{ not_before: { $lte: now } }, { $or: [{ lease_until: null }, { lease_until: { $lt: now } }] }] },
            { projection: { _id: 1, lease_until: 1, created_at: 1 } },
          )
          .sort({ created_at: 1 })
          .limit(100)
          .toArray(),
      ),
    /** Takes the job if its lease is still what the caller saw; counts the attempt. */
    async claimJob(documentId: string, seenLeaseUntil: number | null, owner: string, until: number): Promise<IngestJobRecord | null> {
      const result = await storeCall(() =>
        ingestJobs.updateOne({ _id: documentId, lease_until: seenLeaseUntil }, { $set: { lease_owner: owner, lease_until: until }, $inc: { attempts: 1 } }),
      );
      if (result.modifiedCount !== 1) return null;
      return storeCall(() => ingestJobs.findOne({ _id: documentId, lease_owner: owner }));
    },
    /** Extends the holder's lease; false when the job is gone (deleted, cancelled) or someone else holds it. */
    async renewLease(documentId: string, owner: string, until: number): Promise<boolean> {
      const result = await storeCall(() => ingestJobs.updateOne({ _id: documentId, lease_owner: owner }, { $set: { lease_until: until } }));
      return result.matchedCount === 1;
    },
    /** Gives the job back: claimable at `notBefore` (now, or after a back-off). `unclaimed`: it never ran, so the claim's attempt is undone. */
    async releaseJob(documentId: string, owner: string, notBefore: number, unclaimed = false): Promise<void> {
      await storeCall(() =>
        ingestJobs.updateOne(
          { _id: documentId, lease_owner: owner },
          { $set: { lease_owner: null, lease_until: null, not_before: notBefore }, ...(unclaimed ? { $inc: { attempts: -1 } } : {}) },
        ),
      );
    },
    /** The holder's update of its job (phase, hidden versions, counts); false when it no longer holds it. */
    async updateHeldJob(documentId: string, owner: string, set: Partial<Pick<IngestJobRecord, 'phase' | 'hidden' | 'built'>>): Promise<boolean> {
      const result = await storeCall(() => ingestJobs.updateOne({ _id: documentId, lease_owner: owner }, { $set: set }));
      return result.matchedCount === 1;
    },
    async deleteJob(documentId: string): Promise<void> {
      await storeCall(() => ingestJobs.deleteOne({ _id: documentId }));
    },
    async deleteJobsOfKnowledgeBase(knowledgeBaseId: string): Promise<void> {
      await storeCall(() => ingestJobs.deleteMany({ knowledge_base_id: knowledgeBaseId }));
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
      storeCall(() => ingestJobs.find(knowledgeBaseIds ? { knowledge_base_id: { $in: knowledgeBaseIds } } : {}).toArray()),
    /** The chunk versions a query of these KBs must exclude: one small read per query. */
    async listHiddenChunkVersions(knowledgeBaseIds: string[]): Promise<HiddenChunkVersion[]> {
      if (knowledgeBaseIds.length === 0) return [];
      const jobs = await storeCall(() =>
        ingestJobs.find({ knowledge_base_id: { $in: knowledgeBaseIds } }, { projection: { _id: 1, hidden: 1 } }).toArray(),
      );
      return jobs.flatMap((job) => job.hidden.map((version) => ({ document_id: job._id, version })));
    },
  };
}
