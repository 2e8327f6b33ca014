// The typed configuration's shape (loadConfig in config.ts builds it from the environment): what every part of the
// service reads. Apart from config.ts so that the environment's schema and its reading stay under 500 lines.
import type { DocumentLimits } from './extraction/documents.ts';
import type { Bm25Field, FusionTechnique } from './hybridTuning.ts';

/**
 * How a chunk's sentence vectors are computed (rag/index.ts embedSegments): `late` from the chunk's own forward pass
 * (the mean of its token embeddings over each sentence, no extra inference); `separate` each sentence embedded alone,
 * one unpadded inference each; `batched` the same, in padded inference calls of sentences of similar length.
 */
export const SENTENCE_VECTOR_RECIPES = ['late', 'separate', 'batched'] as const;
export type SentenceVectorRecipe = (typeof SENTENCE_VECTOR_RECIPES)[number];

/** KBQA_LOG_LEVEL's values (pino's levels and silent). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  host: string;
  port: number;
  logLevel: LogLevel;
  localDir: string;
  /** The local stack instance's data, logs and pids (KBQA_STACK_DATA_DIR; localDir unless set). */
  stackDataDir: string;
  /** Where GET /metrics listens; null: KBQA_METRICS_PORT=off. */
  metrics: { host: string; port: number } | null;
  /** API processes on the one port (1: no node:cluster primary). */
  apiProcesses: number;
  opensearch: {
    /** The first of `urls`: where the local stack's first node listens. */
    url: string;
    /** Every node the client may use (a local cluster's nodes when one URL and KBQA_OPENSEARCH_NODES > 1). */
    urls: string[];
    /** Nodes the local stack starts. */
    nodes: number;
    heap: string;
    /** Basic credentials and CA for a cluster with the security plugin; null: plain HTTP as the local stack runs. */
    auth: { username: string; password: string } | null;
    caFile: string | null;
    snapshotDir: string;
    timeoutMs: number;
    shards: number;
    replicas: number;
    /** The chunk index's alias (KBQA_CHUNKS_ALIAS). */
    chunksAlias: string;
    /** The directory holding index-templates/, ingest-pipelines/ and search-pipelines/ (KBQA_SEARCH_ASSETS_DIR); null: the repository's. */
    assetsDir: string | null;
    rrfRankConstant: number;
    /** [bm25, knn], summing to 1: the weights of whichever fusion. */
    rrfWeights: [number, number];
    /** How the named search pipelines fuse the sides (KBQA_HYBRID_FUSION). */
    hybridFusion: FusionTechnique;
    /** Fields (and boosts) BM25 searches (KBQA_BM25_FIELDS). */
    bm25Fields: Bm25Field[];
    /** Each side's depth (KBQA_BM25_DEPTH, KBQA_KNN_DEPTH); null: the request's. See fusion.ts. */
    bm25Depth: number | null;
    knnDepth: number | null;
    /** The k-NN side's sentence-level weight (KBQA_SENTENCE_WEIGHT; 0: off). See fusion.ts. */
    sentenceWeight: number;
  };
  mongodb: { url: string; timeoutMs: number };
  embedder: {
    /** Which embedder new chunk indices are built with (KBQA_EMBEDDER). */
    selected: 'bge-small-en-v1.5' | 'openai';
    /** The local bge model and its workers (always loaded: the extractive answerer and the splitter use them). */
    modelDir: string;
    batchSize: number;
    workers: number;
    threads: number;
    /**
     * The OpenAI-compatible embedder: set when it is selected, and also when KBQA_OPENAI_EMBEDDING_MODEL is set beside
     * KBQA_OPENAI_BASE_URL (so an index it built can still be queried while migrating away from it).
     */
    openai: OpenAIEmbedderConfig | null;
  };
  ingestion: {
    concurrency: number;
    leaseMs: number;
    pollMs: number;
    maxAttempts: number;
    /** Fair share: jobs in flight at most per user and per KB (jobs/scheduling.ts). */
    maxJobsPerUser: number;
    maxJobsPerKnowledgeBase: number;
    shutdownGraceMs: number;
    retireDelayMs: number;
    refreshIntervalMs: number;
  };
  /**
   * How documents are split, and whether chunks carry a vector per sentence (KBQA_SENTENCE_VECTORS): `sentenceVectors`
   * says whether, `sentenceVectorRecipe` how they are computed (null when they are not).
   */
  chunking: {
    chunkTokens: number;
    overlapTokens: number;
    maxChars: number;
    sentenceVectors: boolean;
    sentenceVectorRecipe: SentenceVectorRecipe | null;
  };
  /** Minimum dense similarity of the best passage, per embedder of the question's vector (cosines differ in scale). */
  retrieval: { relevanceFloor: number; openaiRelevanceFloor: number; answerMinSupport: number };
  limits: { maxBodyBytes: number; maxAnonymousBodyBytes: number; maxJsonDepth: number; maxContentBytes: number };
  pdf: {
    maxBytes: number;
    maxPages: number;
    timeoutMs: number;
    maxMemoryMb: number;
    stepMs: number;
    /** Scans read by OCR (extraction/ocr.ts). */
    ocr: { maxPages: number; maxPixels: number; pageMs: number };
  };
  /** The readers of DOCX, ODT, PPTX, XLSX, CSV and HTML: zip bounds, rows, slides (extraction/documents.ts). */
  documents: DocumentLimits;
  /** Per user: documents waiting for ingestion, documents and bytes stored; a failed upload's original kept this long. */
  quotas: {
    maxQueuedDocuments: number;
    maxDocuments: number;
    maxStorageBytes: number;
    failedUploadRetentionMs: number;
  };
  /** Questions per user and process (commands/queryAdmission.ts). */
  queries: { concurrencyPerUser: number; queuePerUser: number; waitMs: number; ratePerMinute: number };
  web: {
    distDir: string;
    publicUrl: string;
    secureCookies: boolean;
    signUpOpen: boolean;
    sessionIdleMs: number;
    sessionMaxMs: number;
    passwordLinkMs: number;
    /** maxFailuresPerAccount: failures of one account from one address (KBQA_SIGN_IN_MAX_FAILURES). */
    signIn: { maxFailuresPerAccount: number; maxFailuresPerAddress: number; windowMs: number };
    /** Sign-up attempts per client address per sign-in window (KBQA_SIGN_UP_MAX_PER_ADDRESS). */
    signUpMaxPerAddress: number;
    /** How long a session's sign-in stands in for the password (KBQA_REAUTH_MINUTES). */
    reauthMs: number;
  };
  /** How long a soft-deleted KB can be restored by its owner; `kbqa kbs purge` removes it after that. */
  deletedRetentionMs: number;
  /**
   * KBs one owner may have; KBs one query searches (named, or its default scope); share requests per owner per
   * sign-in window, and the pending invitations one owner, and one address, may have.
   */
  knowledgeBases: {
    maxPerOwner: number;
    maxSearchedPerQuery: number;
    sharing: { maxPerWindow: number; maxPendingPerSender: number; maxPendingPerRecipient: number };
  };
  /** Conversations one user keeps; turns one conversation holds (KBQA_MAX_CONVERSATIONS_PER_USER, …_TURNS_…). */
  conversations: { maxPerUser: number; maxTurns: number };
  answerModels: {
    defaultModel: string;
    available: string[];
    openai: { baseUrl: string; apiKey: string; models: string[]; timeoutMs: number; maxRetries: number } | null;
  };
}

export interface OpenAIEmbedderConfig {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** The `dimensions` asked for; null: the model's own. */
  dimensions: number | null;
  timeoutMs: number;
  maxRetries: number;
}
