// What every phase of an index migration shares (status.ts, fill.ts, catchUp.ts, swap.ts, migrate.ts): its
// dependencies and options, the unit of work (a live document version), the fill plan and its counts, the outcome.
import type { Config } from '../../config.ts';
import type { Rag } from '../../rag/index.ts';
import type { ChunkIndexMeta, SearchIndex } from '../../search/index.ts';
import { sameChunking } from '../../search/chunkIndices.ts';
import type { Store } from '../../store/index.ts';

export interface IndexMigrationDeps {
  store: Store;
  search: SearchIndex;
  /** Splits and embeds for a re-embedding fill (the configured embedder and chunking). */
  rag: Pick<Rag, 'embedder' | 'split' | 'embedSegments'>;
  config: Pick<Config, 'chunking' | 'pdf' | 'documents' | 'limits'>;
}

export type Embedder = { modelName: string; dimensions: number };

export interface Unit {
  document_id: string;
  knowledge_base_id: string;
  version: number;
}

export const unitKey = (documentId: string, version: number) => `${documentId}:${version}`;

export interface FillPlan {
  target: string;
  /** Where `_reindex` copies from; null: every version is rebuilt from the stored originals. */
  source: string | null;
  embedder: Embedder;
  /** Only these KBs' documents (tests sharing one database); default every document. */
  scope?: string[];
  /**
   * What this run's rebuilds found, per version (unitKey): the splitter's total (a record's total_chunks), written to
   * the records with the chunk counts once the target is served (recordChunkCounts).
   */
  splitTotals: Map<string, number>;
}

export interface FillCounts {
  copied: number;
  rebuilt: number;
  removed: number;
  /**
   * Versions (unitKey) that could not be rebuilt (no stored original): kept out of every later pass, named once;
   * the migration stops before the swap.
   */
  unrebuildable: Set<string>;
}

export interface MigrateOptions {
  /** Progress of the first fill (versions done of versions to do). */
  onProgress?: (done: number, total: number) => void;
  /** A line of what is happening (stderr in the CLI). */
  say?: (line: string) => void;
  /** Stops the fill after this many versions (as a crash would): a re-run resumes. For tests. */
  stopAfterVersions?: number;
  /** After the swap, how long before the catch-up pass: longer than the serving-index cache of every API process. */
  catchUpDelayMs?: number;
  /** How long the catch-up after the swap waits for ingestions running at the swap (they may write the old index). */
  inFlightWaitMs?: number;
  /** Called once the alias is swapped (tests: what a poller saw). */
  afterSwap?: () => void | Promise<void>;
  /**
   * Only these KBs' documents count (tests: each has its own alias but they share one database). A real deployment
   * has its own database: everything in it belongs to its alias.
   */
  knowledgeBaseIds?: string[];
}

export interface MigrationOutcome {
  outcome: 'up-to-date' | 'migrated' | 'caught-up' | 'stopped';
  alias: string;
  from: string | null;
  to: string;
  /** 'reindex': copied from the old index; 'rebuild': re-chunked and re-embedded from the stored originals. */
  fill: 'reindex' | 'rebuild' | null;
  /** Distinct documents and chunks in the target when the alias moved (and, for a copy, in the source). */
  documents: number;
  /**
   * Chunks of live versions in the target; for a copy, those the old index holds of the versions both hold (equal
   * to the target's of the same versions), and `rebuilt`, the target's of versions the old index lacked.
   */
  chunks: { target: number; source: number | null; rebuilt?: number };
  copied: number;
  rebuilt: number;
  removed: number;
  catch_up_passes: number;
  /** Ingestions still running when the catch-up after the swap gave up waiting: run the command again. */
  left_in_flight: number;
  /** Document records whose chunk counts were set to their version's in the new index (a re-chunking changes them). */
  chunk_counts_updated: number;
  /**
   * Versions (unitKey) the catch-up after the swap found no stored original for: the index stays `swapped` (drop-old
   * refuses) until `kbqa doctor --fix` and `kbqa index use <it>` finish it.
   */
  unrebuildable: string[];
}

/** Catch-up passes before the swap: each is shorter than the last while ingestion is moderate. */
export const MAX_PASSES = 8;

/** The command that finishes a live index's catch-up after its swap (whatever template version it is). */
export const finishCommand = (index: string) => `kbqa index use ${index}`;

/** Whether two indices' chunks are interchangeable: the same embedder and the same chunking. */
export function sameChunks(
  a: ChunkIndexMeta | null,
  b: { embedder: string; chunking: ChunkIndexMeta['chunking'] },
): boolean {
  if (!a || a.embedder.name !== b.embedder || !a.chunking || !b.chunking) return false;
  return sameChunking(a.chunking, b.chunking);
}
