// Environment → typed configuration. Every knob is one env var with a default that runs locally; docs/configuration.md lists
// them all (keep the two in step).
// Over 400 lines on purpose: every KBQA_* knob is parsed here (one place; the shape is in configShape.ts).
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  LOG_LEVELS,
  SENTENCE_VECTOR_RECIPES,
  type Config,
  type OpenAIEmbedderConfig,
  type SentenceVectorRecipe,
} from './configShape.ts';
import { ConfigError } from './errors.ts';
import {
  DEFAULT_HYBRID_TUNING,
  DEPTH_RANGE,
  FUSION_TECHNIQUES,
  SENTENCE_WEIGHT_RANGE,
  parseBm25Fields,
  parseWeights,
  tuningProblem,
  type Parsed,
} from './hybridTuning.ts';

const MiB = 1024 * 1024;

const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const number = (fallback: number, min: number, max: number) => z.coerce.number().min(min).max(max).default(fallback);
const list = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0),
    );

/** A knob parsed by a function that names the problem (fusion.ts), reported as that variable's issue. */
const parsedWith = <T>(fallback: string, parse: (value: string) => Parsed<T>) =>
  z
    .string()
    .default(fallback)
    .transform((value, context): T => {
      const parsed = parse(value);
      if ('problem' in parsed) {
        context.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }
      return parsed.value;
    });

const environmentSchema = z.object({
  KBQA_HOST: z.string().default('127.0.0.1'),
  KBQA_PORT: integer(8080, 0, 65535),
  KBQA_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  KBQA_LOCAL_DIR: z.string().default('.local'),
  // Where this stack instance keeps data, logs and pids (default KBQA_LOCAL_DIR): a second local stack (with ports of
  // its own) runs from the same provisioned distribution and model under another directory.
  KBQA_STACK_DATA_DIR: z.string().optional(),
  // Prometheus metrics (GET /metrics) on a listener of their own, never the API's port. An empty variable means
  // unset (the default, like every knob): `off` turns the listener off; 0 takes an ephemeral port.
  KBQA_METRICS_HOST: z.string().default('127.0.0.1'),
  KBQA_METRICS_PORT: z
    .union([z.literal('off'), integer(9464, 0, 65535)], { error: 'a port (0 to 65535) or off' })
    .default(9464),

  // One URL, or every node of a cluster, comma-separated: reads that fail on one node are retried on another.
  KBQA_OPENSEARCH_URL: list('http://127.0.0.1:9200').pipe(z.array(z.string().url()).min(1, 'at least one URL')),
  // How many OpenSearch nodes the local stack starts (one cluster). With one URL above, node i listens on its port + i - 1.
  KBQA_OPENSEARCH_NODES: integer(1, 1, 9),
  // Heap per local node (-Xms/-Xmx).
  KBQA_OPENSEARCH_HEAP: z
    .string()
    .regex(/^\d+[mg]$/, 'like 1g or 512m')
    .default('1g'),
  KBQA_OPENSEARCH_TIMEOUT_MS: integer(10_000, 100, 600_000),
  // An existing cluster with the security plugin: HTTP basic credentials and the CA that signed its certificates.
  KBQA_OPENSEARCH_USERNAME: z.string().optional(),
  KBQA_OPENSEARCH_PASSWORD: z.string().optional(),
  KBQA_OPENSEARCH_CA_FILE: z.string().optional(),
  // The snapshot repository's directory (`kbqa backup`): in every node's path.repo (the local stack sets it) and
  // reachable at the same path by the kbqa command.
  KBQA_OPENSEARCH_SNAPSHOT_DIR: z.string().optional(),
  // Unset: 1 shard and 0 replicas on one node; 3 shards and 1 replica on a local cluster (KBQA_OPENSEARCH_NODES > 1).
  KBQA_CHUNKS_SHARDS: z.coerce.number().int().min(1).max(64).optional(),
  KBQA_CHUNKS_REPLICAS: z.coerce.number().int().min(0).max(8).optional(),
  // The chunk index's alias. Another kbqa-chunks-<name> gives a deployment (or a test) an index of its own on a shared
  // cluster: kbqa-chunks-v1-<name>-<embedder>, still under the template's pattern and the kbqa-chunks* privileges.
  KBQA_CHUNKS_ALIAS: z
    .string()
    .regex(/^kbqa-chunks(?:-[a-z0-9]+)*$/, 'kbqa-chunks or kbqa-chunks-<name> (lower-case letters, digits, dashes)')
    .default('kbqa-chunks'),
  // Where index-templates/, ingest-pipelines/ and search-pipelines/ are read from (a search engineer's edited copy,
  // a test's). Default: the repository's own.
  KBQA_SEARCH_ASSETS_DIR: z.string().optional(),
  // API processes sharing the one port (node:cluster); they share the ingestion jobs through the store.
  KBQA_API_PROCESSES: integer(1, 1, 64),
  KBQA_RRF_RANK_CONSTANT: integer(DEFAULT_HYBRID_TUNING.rankConstant, 1, 10_000),
  // The hybrid fusion's knobs (service/search/fusion.ts). The side weights [bm25, knn] are those of whichever fusion
  // (the name predates min_max and l2); neural-search wants them summing to 1.
  KBQA_RRF_WEIGHTS: parsedWith(DEFAULT_HYBRID_TUNING.weights.join(','), (value) => parseWeights(value, ',')),
  KBQA_HYBRID_FUSION: z.enum(FUSION_TECHNIQUES).default('rrf'),
  KBQA_BM25_FIELDS: parsedWith('text,title', (value) => parseBm25Fields(value, ',')),
  // Unset: each side as deep as the request (50 for every API query).
  KBQA_BM25_DEPTH: z.coerce.number().int().min(DEPTH_RANGE.min).max(DEPTH_RANGE.max).optional(),
  KBQA_KNN_DEPTH: z.coerce.number().int().min(DEPTH_RANGE.min).max(DEPTH_RANGE.max).optional(),
  KBQA_SENTENCE_WEIGHT: number(
    DEFAULT_HYBRID_TUNING.sentenceWeight,
    SENTENCE_WEIGHT_RANGE.min,
    SENTENCE_WEIGHT_RANGE.max,
  ),

  KBQA_MONGODB_URL: z.string().default('mongodb://127.0.0.1:27017/kbqa'),
  KBQA_MONGODB_TIMEOUT_MS: integer(5_000, 100, 600_000),

  KBQA_MODEL_DIR: z.string().optional(),
  // Passages per task handed to a model worker: one (~25–70 ms on one thread), so a question waits behind at most one
  // passage. Passages are embedded one sequence per inference anyway (exact mode), so bigger tasks save nothing.
  KBQA_EMBED_BATCH_SIZE: integer(1, 1, 256),
  // Model worker threads per API process (0: the cores shared out among KBQA_API_PROCESSES, at least one each), each
  // with its own ONNX session of KBQA_EMBED_THREADS intra-op threads.
  KBQA_MODEL_WORKERS: integer(0, 0, 64),
  KBQA_EMBED_THREADS: integer(1, 1, 64),
  KBQA_CHUNK_TOKENS: integer(510, 32, 510),
  KBQA_CHUNK_OVERLAP_TOKENS: integer(32, 0, 256),
  KBQA_CHUNK_MAX_CHARS: integer(4096, 256, 65536),
  // How chunks' sentence vectors are computed (configShape.ts SENTENCE_VECTOR_RECIPES; `on`: the default recipe), or
  // off: no per-sentence vectors (a smaller index, and the query's k-NN side without its rescoring script), at the
  // sentence term's quality (docs/search-engineering.md, "Sentence vectors"). Like the chunking above, a change takes
  // a migration (kbqa index migrate).
  KBQA_SENTENCE_VECTORS: z.enum([...SENTENCE_VECTOR_RECIPES, 'on', 'off']).default('on'),
  // On the fixture corpus, off-topic questions' best bge-small cosines reach 0.591 and answerable questions' best
  // passages sit at ≥ 0.622 (default chunking and question vector). Measured, not guessed: see docs/api.md.
  KBQA_RELEVANCE_FLOOR: number(0.6, 0, 1),
  // The same floor for question vectors of the OpenAI-compatible embedder. KBQA_RELEVANCE_FLOOR is measured on bge's
  // cosines; another model's sit on another scale (bge's 0.6 could leave nothing relevant), and which model is behind
  // KBQA_OPENAI_BASE_URL is the deployment's choice: 0, no floor, until measured for it (docs/api.md, "Nothing relevant").
  KBQA_OPENAI_RELEVANCE_FLOOR: number(0, 0, 1),
  // The extractive answerer's last check, after the floor and the answer's constraints (rag/answerCues.ts): its best
  // fitting sentence's support (coverage of the question's distinctive terms and similarity, blended) must reach
  // this, else the answer is "nothing". Above 0.28 the fixture corpus starts losing answers it holds
  // (docs/architecture.md, "The extractive answerer's decision"). 0 leaves only the constraints.
  KBQA_ANSWER_MIN_SUPPORT: number(0.25, 0, 1),

  // Ingestion jobs (see jobs/runner.ts).
  KBQA_INGEST_CONCURRENCY: integer(4, 1, 64),
  KBQA_JOB_LEASE_MS: integer(30_000, 1_000, 3_600_000),
  KBQA_JOB_POLL_MS: integer(1_000, 50, 60_000),
  KBQA_INGEST_MAX_ATTEMPTS: integer(5, 1, 100),
  // Jobs of one user, and of one KB, in flight at once across all processes: with 4 slots, 3 leaves one for others.
  KBQA_INGEST_MAX_JOBS_PER_USER: integer(3, 1, 1_000),
  KBQA_INGEST_MAX_JOBS_PER_KB: integer(3, 1, 1_000),
  KBQA_SHUTDOWN_GRACE_MS: integer(10_000, 0, 600_000),
  // A replaced version's chunks stay (hidden) this long after the swap, for queries that read the hidden list before it.
  KBQA_VERSION_RETIRE_DELAY_MS: integer(2_000, 0, 600_000),
  // Refreshes of the chunk index are shared by every ingest finishing meanwhile, at most one per this interval.
  KBQA_REFRESH_INTERVAL_MS: integer(50, 0, 10_000),

  KBQA_MAX_BODY_BYTES: integer(10 * MiB, 1024, 1024 * MiB),
  // The anonymous web routes (sign-in, sign-up, first account, password links) read only this much, uncompressed: an
  // email and a password of 1,024 characters fit, escaped or not.
  KBQA_MAX_ANONYMOUS_BODY_BYTES: integer(8 * 1024, 1024, 64 * 1024),
  // Objects and arrays inside one another in a JSON body (the deepest metadata filter needs about 20).
  KBQA_MAX_JSON_DEPTH: integer(32, 8, 1_000),
  KBQA_MAX_CONTENT_BYTES: integer(5 * MiB, 1, 1024 * MiB),
  // KBs one owner may have (soft-deleted ones count until purged), and KBs one question may search, named or by
  // default: each KB is a term of the query's filter and a lookup of its hidden versions (docs/security.md).
  KBQA_MAX_KNOWLEDGE_BASES_PER_OWNER: integer(1_000, 1, 100_000),
  KBQA_MAX_SEARCHED_KNOWLEDGE_BASES: integer(100, 1, 100),
  // Sharing (commands/shareInvitations.ts, docs/security.md): share requests one owner may make per sign-in window
  // (counted before anything is looked up, so the answer cannot be used to probe addresses at speed), and the
  // invitations one owner may have pending, and one address may have pending from everyone.
  KBQA_SHARE_MAX_PER_WINDOW: integer(30, 1, 100_000),
  KBQA_MAX_PENDING_INVITATIONS_PER_SENDER: integer(50, 1, 10_000),
  KBQA_MAX_PENDING_INVITATIONS_PER_RECIPIENT: integer(20, 1, 10_000),
  // Conversations one user keeps, and turns (a question and its answer) one conversation holds: each turn re-reads
  // the previous one, and a conversation is read back whole (docs/security.md).
  KBQA_MAX_CONVERSATIONS_PER_USER: integer(1_000, 1, 100_000),
  KBQA_MAX_TURNS_PER_CONVERSATION: integer(200, 1, 10_000),
  // PDFs (web app uploads): the file size, the page count, the ceiling of the extraction time (the budget scales
  // with size and pages: extraction/pdf.ts), and the memory one PDF's reading process may take beyond Node and pdfjs.
  KBQA_MAX_UPLOAD_BYTES: integer(50 * MiB, 1024, 4096 * MiB),
  KBQA_PDF_MAX_PAGES: integer(2_000, 1, 100_000),
  KBQA_PDF_TIMEOUT_MS: integer(120_000, 100, 3_600_000),
  KBQA_PDF_MAX_MEMORY_MB: integer(1_024, 64, 65_536),
  // A PDF reads at least this long before it gives the reader up to another PDF waiting for it (extraction/pdf.ts):
  // the longest a small PDF waits behind a big one; each extra step costs the big one a reader start (~0.3 s).
  KBQA_PDF_STEP_MS: integer(1_000, 100, 600_000),
  // OCR (extraction/ocr.ts): pages of one document read by OCR (a PDF with more pages without text fails at once,
  // naming it), pixels of one scan (read from its header before decoding), and the time each OCR page adds to the
  // document's budget (~1.5–3 s a page on this 2-core machine, more under load).
  KBQA_OCR_MAX_PAGES: integer(50, 1, 10_000),
  KBQA_OCR_MAX_PIXELS: integer(40_000_000, 10_000, 500_000_000),
  KBQA_OCR_PAGE_MS: integer(15_000, 100, 600_000),
  // Office documents, spreadsheets, decks and web pages (extraction/documents.ts): the zip bounds of DOCX, ODT, PPTX
  // and XLSX (entries, one part's and all parts' inflated size, a part's ratio: zip bombs), rows of a workbook or CSV,
  // bytes of one CSV record, slides of a deck, and the elements of an HTML page its main-content reader looks at.
  KBQA_DOC_MAX_ZIP_ENTRIES: integer(10_000, 10, 1_000_000),
  KBQA_DOC_MAX_PART_MB: integer(256, 1, 4_096),
  KBQA_DOC_MAX_INFLATED_MB: integer(512, 1, 16_384),
  KBQA_DOC_MAX_ZIP_RATIO: integer(200, 10, 100_000),
  KBQA_DOC_MAX_ROWS: integer(100_000, 1, 10_000_000),
  KBQA_DOC_MAX_RECORD_BYTES: integer(64 * 1024, 1024, 64 * MiB),
  KBQA_DOC_MAX_SLIDES: integer(1_000, 1, 100_000),
  KBQA_DOC_MAX_HTML_ELEMENTS: integer(200_000, 1_000, 10_000_000),
  // Per-user quotas (commands/quotas.ts): documents waiting for ingestion (429 beyond), documents and bytes stored
  // (413 beyond), and how long a failed upload's original is kept.
  KBQA_MAX_QUEUED_DOCUMENTS_PER_USER: integer(200, 1, 1_000_000),
  KBQA_MAX_DOCUMENTS_PER_USER: integer(10_000, 1, 1_000_000_000),
  KBQA_MAX_STORAGE_BYTES_PER_USER: integer(1024 * MiB, 1024, Number.MAX_SAFE_INTEGER),
  KBQA_FAILED_UPLOAD_RETENTION_DAYS: integer(7, 0, 3650),
  // Questions (POST /query and /search, both realms) per user and API process (commands/queryAdmission.ts): answered
  // at once, waiting beyond them (429 beyond), how long one may wait (429 after), and per minute (0: no rate bound).
  KBQA_QUERY_CONCURRENCY_PER_USER: integer(4, 1, 1_000),
  KBQA_QUERY_QUEUE_PER_USER: integer(8, 0, 10_000),
  KBQA_QUERY_WAIT_MS: integer(10_000, 1, 600_000),
  KBQA_QUERY_RATE_PER_MINUTE: integer(0, 0, 1_000_000),

  // The web app (service/http/web*.ts, web/).
  KBQA_WEB_DIST: z.string().default('web/dist'),
  // Where people reach the service: the origin of the links `kbqa users create` prints, and https here sets the
  // cookie's Secure flag. Default: http://KBQA_HOST:KBQA_PORT.
  KBQA_PUBLIC_URL: z.string().url().optional(),
  KBQA_SIGNUP: z.enum(['closed', 'open']).default('closed'),
  // At least 5: a session's last use is written at most once a minute.
  KBQA_SESSION_IDLE_MINUTES: integer(60 * 24, 5, 60 * 24 * 365),
  KBQA_SESSION_MAX_HOURS: integer(24 * 14, 1, 24 * 365),
  KBQA_PASSWORD_LINK_HOURS: integer(72, 1, 24 * 60),
  KBQA_SIGN_IN_MAX_FAILURES: integer(5, 1, 1_000),
  // Per account at one address, and per address over all accounts (the looser ceiling: an office shares it).
  KBQA_SIGN_IN_MAX_FAILURES_PER_ADDRESS: integer(100, 1, 100_000),
  KBQA_SIGN_IN_WINDOW_MINUTES: integer(15, 1, 24 * 60),
  // Open sign-ups from one client address per sign-in window, counted before each Argon2id hash.
  KBQA_SIGN_UP_MAX_PER_ADDRESS: integer(10, 1, 100_000),
  // A session's sign-in is recent this long: creating an API key asks for the password after it (0: always asks).
  KBQA_REAUTH_MINUTES: integer(5, 0, 24 * 60),
  KBQA_DELETED_RETENTION_DAYS: integer(30, 1, 3650),

  KBQA_OPENAI_BASE_URL: z.string().url().optional(),
  KBQA_OPENAI_API_KEY: z.string().optional(),
  KBQA_OPENAI_MODELS: list(''),
  KBQA_DEFAULT_MODEL: z.string().optional(),
  KBQA_LLM_TIMEOUT_MS: integer(30_000, 100, 600_000),
  KBQA_LLM_MAX_RETRIES: integer(2, 0, 10),
  // The embedder new chunk indices are built with: the local bge model (in the model workers), or an OpenAI-compatible
  // embeddings endpoint at KBQA_OPENAI_BASE_URL (the same timeout and retries as the answer models).
  KBQA_EMBEDDER: z.enum(['bge-small-en-v1.5', 'openai']).default('bge-small-en-v1.5'),
  // Part of the chunk index's name (openai-<model>), which OpenSearch bounds at 255 bytes.
  KBQA_OPENAI_EMBEDDING_MODEL: z.string().max(150, 'at most 150 characters (it names the chunk index)').optional(),
  // Sent as `dimensions` (models that can shorten their vectors, text-embedding-3-*); unset: the model's own size.
  KBQA_OPENAI_EMBEDDING_DIMENSIONS: z.coerce.number().int().min(1).max(16_384).optional(),
});

/**
 * The sentence vectors' recipe of KBQA_SENTENCE_VECTORS=on (the default): `separate`, batch-invariant and what every
 * index before the knob holds. `batched` was ~1.1 times faster raw but gained nothing measurable end to end (SciFact
 * test 490 s against 487 s); `late` lost 0.017 dev nDCG@10 (docs/search-engineering.md, "Sentence vectors: late
 * chunking").
 */
export const DEFAULT_SENTENCE_VECTOR_RECIPE: SentenceVectorRecipe = 'separate';

export const EXTRACTIVE_MODEL = 'kbqa-extractive';

export type { Config, OpenAIEmbedderConfig } from './configShape.ts';

function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end -= 1;
  return url.slice(0, end);
}

/**
 * The URLs of every node: as listed, or, for one URL and a local cluster of N nodes, that URL's port and the N - 1
 * ports after it (how the local stack places its nodes).
 */
function clusterUrls(listed: string[], nodes: number): string[] {
  const urls = listed.map(withoutTrailingSlashes);
  if (urls.length > 1 || nodes === 1) return urls;
  const first = new URL(urls[0]);
  const port = Number(first.port || (first.protocol === 'https:' ? 443 : 80));
  return Array.from({ length: nodes }, (_unused, index) => {
    const node = new URL(urls[0]);
    node.port = String(port + index);
    return withoutTrailingSlashes(node.toString());
  });
}

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set" (docker-compose passes `${VAR:-}` through as "").
  const present = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const env = parsed.data;
  const localDir = resolve(env.KBQA_LOCAL_DIR);
  const stackDataDir = resolve(env.KBQA_STACK_DATA_DIR ?? localDir);
  const depthProblem = tuningProblem({ bm25Depth: env.KBQA_BM25_DEPTH ?? null, knnDepth: env.KBQA_KNN_DEPTH ?? null });
  if (depthProblem)
    throw new ConfigError(`invalid configuration: KBQA_KNN_DEPTH must be at most KBQA_BM25_DEPTH: ${depthProblem}`);
  if (
    env.KBQA_SENTENCE_VECTORS === 'off' &&
    present.KBQA_SENTENCE_WEIGHT !== undefined &&
    env.KBQA_SENTENCE_WEIGHT > 0
  ) {
    throw new ConfigError(
      'invalid configuration: KBQA_SENTENCE_WEIGHT scores sentence vectors, which KBQA_SENTENCE_VECTORS=off leaves out: unset it or set it to 0',
    );
  }
  if (env.KBQA_CHUNK_OVERLAP_TOKENS >= env.KBQA_CHUNK_TOKENS) {
    throw new ConfigError('invalid configuration: KBQA_CHUNK_OVERLAP_TOKENS must be smaller than KBQA_CHUNK_TOKENS');
  }

  if ((env.KBQA_OPENSEARCH_USERNAME === undefined) !== (env.KBQA_OPENSEARCH_PASSWORD === undefined)) {
    throw new ConfigError(
      'invalid configuration: set both KBQA_OPENSEARCH_USERNAME and KBQA_OPENSEARCH_PASSWORD, or neither',
    );
  }
  const opensearchUrls = clusterUrls(env.KBQA_OPENSEARCH_URL, env.KBQA_OPENSEARCH_NODES);
  const cluster = env.KBQA_OPENSEARCH_NODES > 1;

  const openai =
    env.KBQA_OPENAI_BASE_URL !== undefined
      ? {
          baseUrl: env.KBQA_OPENAI_BASE_URL,
          apiKey: env.KBQA_OPENAI_API_KEY ?? 'not-needed',
          models: env.KBQA_OPENAI_MODELS.length > 0 ? env.KBQA_OPENAI_MODELS : ['gpt-4o-mini'],
          timeoutMs: env.KBQA_LLM_TIMEOUT_MS,
          maxRetries: env.KBQA_LLM_MAX_RETRIES,
        }
      : null;
  const available = [...(openai?.models ?? []), EXTRACTIVE_MODEL];
  if (env.KBQA_EMBEDDER === 'openai' && env.KBQA_OPENAI_BASE_URL === undefined) {
    throw new ConfigError(
      'invalid configuration: KBQA_EMBEDDER=openai needs KBQA_OPENAI_BASE_URL (the OpenAI-compatible endpoint, e.g. https://api.openai.com/v1)',
    );
  }
  const embeddingModel = env.KBQA_OPENAI_EMBEDDING_MODEL ?? 'text-embedding-3-small';
  // The model's name becomes part of the chunk index's name, which needs a letter or digit of it.
  if (!/[a-z0-9]/i.test(embeddingModel)) {
    throw new ConfigError('invalid configuration: KBQA_OPENAI_EMBEDDING_MODEL must name a model (letters, digits)');
  }
  const openaiEmbedder =
    env.KBQA_OPENAI_BASE_URL !== undefined &&
    (env.KBQA_EMBEDDER === 'openai' || env.KBQA_OPENAI_EMBEDDING_MODEL !== undefined)
      ? {
          baseUrl: env.KBQA_OPENAI_BASE_URL,
          apiKey: env.KBQA_OPENAI_API_KEY ?? 'not-needed',
          model: embeddingModel,
          dimensions: env.KBQA_OPENAI_EMBEDDING_DIMENSIONS ?? null,
          timeoutMs: env.KBQA_LLM_TIMEOUT_MS,
          maxRetries: env.KBQA_LLM_MAX_RETRIES,
        }
      : null;
  // With an LLM endpoint configured its first model is the default; otherwise the built-in extractive answerer.
  const defaultModel = env.KBQA_DEFAULT_MODEL ?? openai?.models[0] ?? EXTRACTIVE_MODEL;
  if (!available.includes(defaultModel)) {
    throw new ConfigError(`invalid configuration: KBQA_DEFAULT_MODEL must be one of ${available.join(', ')}`);
  }

  const publicUrl = withoutTrailingSlashes(env.KBQA_PUBLIC_URL ?? `http://${env.KBQA_HOST}:${env.KBQA_PORT}`);

  return {
    host: env.KBQA_HOST,
    port: env.KBQA_PORT,
    logLevel: env.KBQA_LOG_LEVEL,
    localDir,
    stackDataDir,
    metrics: env.KBQA_METRICS_PORT === 'off' ? null : { host: env.KBQA_METRICS_HOST, port: env.KBQA_METRICS_PORT },
    apiProcesses: env.KBQA_API_PROCESSES,
    opensearch: {
      url: opensearchUrls[0],
      urls: opensearchUrls,
      nodes: env.KBQA_OPENSEARCH_NODES,
      heap: env.KBQA_OPENSEARCH_HEAP,
      auth:
        env.KBQA_OPENSEARCH_USERNAME !== undefined && env.KBQA_OPENSEARCH_PASSWORD !== undefined
          ? { username: env.KBQA_OPENSEARCH_USERNAME, password: env.KBQA_OPENSEARCH_PASSWORD }
          : null,
      caFile: env.KBQA_OPENSEARCH_CA_FILE !== undefined ? resolve(env.KBQA_OPENSEARCH_CA_FILE) : null,
      snapshotDir: resolve(env.KBQA_OPENSEARCH_SNAPSHOT_DIR ?? `${stackDataDir}/snapshots`),
      timeoutMs: env.KBQA_OPENSEARCH_TIMEOUT_MS,
      shards: env.KBQA_CHUNKS_SHARDS ?? (cluster ? 3 : 1),
      replicas: env.KBQA_CHUNKS_REPLICAS ?? (cluster ? 1 : 0),
      chunksAlias: env.KBQA_CHUNKS_ALIAS,
      assetsDir: env.KBQA_SEARCH_ASSETS_DIR !== undefined ? resolve(env.KBQA_SEARCH_ASSETS_DIR) : null,
      rrfRankConstant: env.KBQA_RRF_RANK_CONSTANT,
      rrfWeights: env.KBQA_RRF_WEIGHTS,
      hybridFusion: env.KBQA_HYBRID_FUSION,
      bm25Fields: env.KBQA_BM25_FIELDS,
      bm25Depth: env.KBQA_BM25_DEPTH ?? null,
      knnDepth: env.KBQA_KNN_DEPTH ?? null,
      // Without sentence vectors there is nothing for the term to score.
      sentenceWeight: env.KBQA_SENTENCE_VECTORS !== 'off' ? env.KBQA_SENTENCE_WEIGHT : 0,
    },
    mongodb: { url: env.KBQA_MONGODB_URL, timeoutMs: env.KBQA_MONGODB_TIMEOUT_MS },
    embedder: {
      selected: env.KBQA_EMBEDDER,
      openai: openaiEmbedder,
      modelDir: resolve(env.KBQA_MODEL_DIR ?? `${localDir}/models/bge-small-en-v1.5-q`),
      batchSize: env.KBQA_EMBED_BATCH_SIZE,
      workers:
        env.KBQA_MODEL_WORKERS > 0
          ? env.KBQA_MODEL_WORKERS
          : Math.max(1, Math.floor(availableParallelism() / env.KBQA_API_PROCESSES)),
      threads: env.KBQA_EMBED_THREADS,
    },
    ingestion: {
      concurrency: env.KBQA_INGEST_CONCURRENCY,
      leaseMs: env.KBQA_JOB_LEASE_MS,
      pollMs: env.KBQA_JOB_POLL_MS,
      maxAttempts: env.KBQA_INGEST_MAX_ATTEMPTS,
      maxJobsPerUser: env.KBQA_INGEST_MAX_JOBS_PER_USER,
      maxJobsPerKnowledgeBase: env.KBQA_INGEST_MAX_JOBS_PER_KB,
      shutdownGraceMs: env.KBQA_SHUTDOWN_GRACE_MS,
      retireDelayMs: env.KBQA_VERSION_RETIRE_DELAY_MS,
      refreshIntervalMs: env.KBQA_REFRESH_INTERVAL_MS,
    },
    chunking: {
      chunkTokens: env.KBQA_CHUNK_TOKENS,
      overlapTokens: env.KBQA_CHUNK_OVERLAP_TOKENS,
      maxChars: env.KBQA_CHUNK_MAX_CHARS,
      sentenceVectors: env.KBQA_SENTENCE_VECTORS !== 'off',
      sentenceVectorRecipe:
        env.KBQA_SENTENCE_VECTORS === 'off'
          ? null
          : env.KBQA_SENTENCE_VECTORS === 'on'
            ? DEFAULT_SENTENCE_VECTOR_RECIPE
            : env.KBQA_SENTENCE_VECTORS,
    },
    retrieval: {
      relevanceFloor: env.KBQA_RELEVANCE_FLOOR,
      openaiRelevanceFloor: env.KBQA_OPENAI_RELEVANCE_FLOOR,
      answerMinSupport: env.KBQA_ANSWER_MIN_SUPPORT,
    },
    limits: {
      maxBodyBytes: env.KBQA_MAX_BODY_BYTES,
      maxAnonymousBodyBytes: env.KBQA_MAX_ANONYMOUS_BODY_BYTES,
      maxJsonDepth: env.KBQA_MAX_JSON_DEPTH,
      maxContentBytes: env.KBQA_MAX_CONTENT_BYTES,
    },
    pdf: {
      maxBytes: env.KBQA_MAX_UPLOAD_BYTES,
      maxPages: env.KBQA_PDF_MAX_PAGES,
      timeoutMs: env.KBQA_PDF_TIMEOUT_MS,
      maxMemoryMb: env.KBQA_PDF_MAX_MEMORY_MB,
      stepMs: env.KBQA_PDF_STEP_MS,
      ocr: { maxPages: env.KBQA_OCR_MAX_PAGES, maxPixels: env.KBQA_OCR_MAX_PIXELS, pageMs: env.KBQA_OCR_PAGE_MS },
    },
    documents: {
      maxZipEntries: env.KBQA_DOC_MAX_ZIP_ENTRIES,
      maxPartBytes: env.KBQA_DOC_MAX_PART_MB * MiB,
      maxInflatedBytes: env.KBQA_DOC_MAX_INFLATED_MB * MiB,
      maxZipRatio: env.KBQA_DOC_MAX_ZIP_RATIO,
      maxRows: env.KBQA_DOC_MAX_ROWS,
      maxRecordBytes: env.KBQA_DOC_MAX_RECORD_BYTES,
      maxSlides: env.KBQA_DOC_MAX_SLIDES,
      maxHtmlElements: env.KBQA_DOC_MAX_HTML_ELEMENTS,
    },
    quotas: {
      maxQueuedDocuments: env.KBQA_MAX_QUEUED_DOCUMENTS_PER_USER,
      maxDocuments: env.KBQA_MAX_DOCUMENTS_PER_USER,
      maxStorageBytes: env.KBQA_MAX_STORAGE_BYTES_PER_USER,
      failedUploadRetentionMs: env.KBQA_FAILED_UPLOAD_RETENTION_DAYS * 86_400_000,
    },
    queries: {
      concurrencyPerUser: env.KBQA_QUERY_CONCURRENCY_PER_USER,
      queuePerUser: env.KBQA_QUERY_QUEUE_PER_USER,
      waitMs: env.KBQA_QUERY_WAIT_MS,
      ratePerMinute: env.KBQA_QUERY_RATE_PER_MINUTE,
    },
    web: {
      distDir: resolve(env.KBQA_WEB_DIST),
      publicUrl,
      secureCookies: publicUrl.startsWith('https:'),
      signUpOpen: env.KBQA_SIGNUP === 'open',
      sessionIdleMs: env.KBQA_SESSION_IDLE_MINUTES * 60_000,
      sessionMaxMs: env.KBQA_SESSION_MAX_HOURS * 3_600_000,
      passwordLinkMs: env.KBQA_PASSWORD_LINK_HOURS * 3_600_000,
      signIn: {
        maxFailuresPerAccount: env.KBQA_SIGN_IN_MAX_FAILURES,
        maxFailuresPerAddress: env.KBQA_SIGN_IN_MAX_FAILURES_PER_ADDRESS,
        windowMs: env.KBQA_SIGN_IN_WINDOW_MINUTES * 60_000,
      },
      signUpMaxPerAddress: env.KBQA_SIGN_UP_MAX_PER_ADDRESS,
      reauthMs: env.KBQA_REAUTH_MINUTES * 60_000,
    },
    deletedRetentionMs: env.KBQA_DELETED_RETENTION_DAYS * 86_400_000,
    knowledgeBases: {
      maxPerOwner: env.KBQA_MAX_KNOWLEDGE_BASES_PER_OWNER,
      maxSearchedPerQuery: env.KBQA_MAX_SEARCHED_KNOWLEDGE_BASES,
      sharing: {
        maxPerWindow: env.KBQA_SHARE_MAX_PER_WINDOW,
        maxPendingPerSender: env.KBQA_MAX_PENDING_INVITATIONS_PER_SENDER,
        maxPendingPerRecipient: env.KBQA_MAX_PENDING_INVITATIONS_PER_RECIPIENT,
      },
    },
    conversations: {
      maxPerUser: env.KBQA_MAX_CONVERSATIONS_PER_USER,
      maxTurns: env.KBQA_MAX_TURNS_PER_CONVERSATION,
    },
    answerModels: { defaultModel, available, openai },
  };
}
