// What one run of an ingestion job shares (runner.ts runs jobs; this file only types what a run hands around): the
// engine's dependencies, the run's context handed from the runner to the steps, and the two signals that end a run
// early without failing its document.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Rag, SegmentEmbedding } from '../rag/index.ts';
import type { TextSegment } from '../rag/splitter.ts';
import type { SearchIndex, ServingIndex } from '../search/index.ts';
import type { DocumentRecord, IngestionTimings, IngestJobRecord, Store } from '../store/index.ts';
import type { PdfExtractor, PdfSteps } from '../extraction/pdf.ts';
import type { Metrics } from '../metrics.ts';

export interface IngestDeps {
  store: Store;
  search: SearchIndex;
  rag: Rag;
  logger: Logger;
  config: Pick<Config, 'ingestion' | 'pdf' | 'documents' | 'limits'>;
  /** Reads PDFs in worker threads; by default the runner starts one on its first PDF and closes it on stop(). */
  pdf?: PdfExtractor;
  /** Counts the outages a job failed on that no request answers (a waiting request's 503 is counted as a response). */
  metrics?: Pick<Metrics, 'countUpstreamError'>;
}

/** Why a running job stopped before its end (not a failure of the document). */
export type StopReason = 'shutdown' | 'lease-lost';

/** Control-flow signal: the job gives up its document (shutdown, or its lease lost); caught by settleFailure (failures.ts). */
export class JobStopped extends Error {
  readonly reason: StopReason;
  constructor(reason: StopReason) {
    super(`ingestion job stopped: ${reason}`);
    this.reason = reason;
  }
}

/**
 * A job's document, KB or version went away while it ran (deleted, superseded): it removes what it wrote.
 * Control-flow signal: caught by settleFailure (failures.ts), which answers the waiting request instead of
 * failing the document.
 */
export class JobCancelled extends Error {
  readonly knowledgeBaseGone: boolean;
  constructor(knowledgeBaseGone: boolean) {
    super('ingestion job cancelled');
    this.knowledgeBaseGone = knowledgeBaseGone;
  }
}

/** Queues the holder's writes to its job record one after the other. */
export type HeldWrites = <T>(write: () => Promise<T>) => Promise<T>;

/** One run of a held job: what its steps share. */
export interface JobRun {
  deps: IngestDeps;
  job: IngestJobRecord;
  owner: string;
  /** Throws JobStopped when the lease was lost or the process is stopping: called between two steps. */
  checkpoint: () => void;
  /** Aborted as the job is stopped: for a step that can be cut short (reading a PDF). */
  stopped: AbortSignal;
  /** Runs a write of the holder to its job record after the one before (runner.ts #launch). */
  held: HeldWrites;
  /** The version is live (a waiting request answers now; retiring the old one goes on). */
  onLive: (document: DocumentRecord) => void;
  /** A PDF's text is extracted (or failed to be): the reader is free for the next PDF. */
  onExtracted: () => void;
  /** A PDF's reading steps: it gives the reader up between them while other PDFs wait (see IngestRunner). */
  readerSteps: PdfSteps;
  /** What the job records of its waits, written with its progress. */
  timings: IngestionTimings;
  prepared: Prepared | undefined;
}

/**
 * What a request that just wrote the document hands its own job, so the job does not read back what is in memory
 * (on FerretDB a read of a just-written record scans its table).
 */
export interface Prepared {
  document: DocumentRecord;
  content: string;
  /**
   * The text's split and its first step's vectors, begun while the request's writes went to the store
   * (buildVersion.ts startFirstStep): the embedder works meanwhile instead of waiting for them.
   */
  firstStep?: Promise<FirstStep>;
}

/**
 * A text split, and the vectors of its first step by the embedder of `serving`, the index the alias pointed to as
 * the step began: the version is built for that index (nothing of it is written anywhere yet).
 */
export interface FirstStep {
  total: number;
  segments: TextSegment[];
  embeddings: SegmentEmbedding[];
  serving: ServingIndex;
}
