// /healthz (the process is alive) and /readyz (every dependency answers). Unauthenticated, outside /api/v1.
import type Router from '@koa/router';
import { newRouter, type AppDeps, type AppState } from '../context.ts';
import { errorSummary } from '../../errors.ts';
import type { SearchIndexDetail } from '../../search/index.ts';

/**
 * How long one readiness probe answers for. /readyz is unauthenticated and may be polled several times a second
 * (load balancers, orchestrators); each probe runs an embedder inference and a round trip to each store. Within
 * this window every caller gets the last result, and concurrent callers share the probe in flight.
 */
export const READINESS_TTL_MS = 1500;

const COMPONENTS = ['opensearch', 'mongodb', 'embedder', 'splitter'] as const;
type Component = (typeof COMPONENTS)[number];

interface Readiness {
  /** Per component: null when it answers, else what is wrong (logged, never sent: /readyz is public). */
  problems: Record<Component, string | null>;
  /**
   * The chunk index behind the alias and how it differs from the asset files (a template edited, a new version, another
   * embedder configured): detail only, never a reason to be unready (the index serves as it is until migrated). Only
   * its drift kinds and command are sent.
   */
  searchIndex: SearchIndexDetail | null;
}

/** A check that never throws: a thrown error is the problem it reports. */
async function problemOf(check: () => Promise<string | null>): Promise<string | null> {
  try {
    return await check();
  } catch (error) {
    const summary = errorSummary(error);
    // A store error's cause is the plain { name, code, message } the store layer kept: what actually failed.
    const cause = (error as { cause?: { message?: unknown } } | null)?.cause;
    return `${summary.name}: ${summary.message}${typeof cause?.message === 'string' ? ` (${cause.message})` : ''}`;
  }
}

/** How long the serving index's embedder, when not the configured one, is taken to answer after it did. */
const SERVING_EMBEDDER_OK_MS = 30_000;

function readinessProbe(deps: AppDeps): () => Promise<Readiness> {
  let last: { at: number; readiness: Readiness } | null = null;
  let inFlight: Promise<Readiness> | null = null;
  let servingEmbedderAnswered: { modelName: string; at: number } | null = null;

  /**
   * Questions are embedded by the embedder of the index the alias points to, which is not the configured one
   * between a switch of embedders and its migration (or after a rollback): that one must answer too. An inference
   * per probe at most every SERVING_EMBEDDER_OK_MS (an OpenAI-compatible one is a network call).
   */
  const servingEmbedderProblem = async (): Promise<string | null> => {
    // An unreadable alias is the opensearch component's problem, not the embedder's.
    const serving = await deps.search.servingIndex().catch(() => null);
    if (!serving || serving.embedder.modelName === deps.rag.embedderName) return null;
    const { modelName } = serving.embedder;
    if (
      servingEmbedderAnswered?.modelName === modelName &&
      performance.now() - servingEmbedderAnswered.at < SERVING_EMBEDDER_OK_MS
    )
      return null;
    await deps.rag.embedQuestion('ready', modelName);
    servingEmbedderAnswered = { modelName, at: performance.now() };
    return null;
  };

  const probe = async (): Promise<Readiness> => {
    const [opensearch, mongodb, embedder, splitter, searchIndex] = await Promise.all([
      problemOf(() => deps.search.problem()),
      problemOf(() => deps.store.ping().then(() => null)),
      problemOf(async () => (await deps.rag.embedderProblem()) ?? (await servingEmbedderProblem())),
      problemOf(() => deps.rag.splitterProblem()),
      deps.search.searchIndexDetail().catch(() => null),
    ]);
    const problems = { opensearch, mongodb, embedder, splitter };
    const failing = Object.fromEntries(Object.entries(problems).filter(([, problem]) => problem !== null));
    if (Object.keys(failing).length > 0) deps.logger.warn({ components: failing }, 'not ready');
    return { problems, searchIndex };
  };

  return () => {
    if (last !== null && performance.now() - last.at < READINESS_TTL_MS) return Promise.resolve(last.readiness);
    inFlight ??= probe()
      .then((readiness) => {
        last = { at: performance.now(), readiness };
        return readiness;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
}

export function healthRoutes(deps: AppDeps): Router<AppState> {
  // Case-sensitive like every router (http/context.ts newRouter): /READYZ is no route.
  const router = newRouter();
  const readiness = readinessProbe(deps);
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const { problems, searchIndex } = await readiness();
    const components = Object.fromEntries(
      COMPONENTS.map((name) => [name, problems[name] === null ? 'ok' : 'unavailable']),
    );
    const failing = COMPONENTS.filter((name) => problems[name] !== null);
    if (failing.length === 0) {
      // Public: what kind of drift there is and the command that resolves it; never index names or analysis diffs.
      const detail = searchIndex
        ? {
            search_index: {
              drift: [...new Set(searchIndex.drift.map((entry) => entry.kind))],
              command: searchIndex.command,
            },
          }
        : {};
      ctx.body = { status: 'ready', components, ...detail };
      return;
    }
    ctx.status = 503;
    ctx.body = { error: { code: 'server_error', message: `not ready: ${failing.join(', ')} unavailable` }, components };
  });
  return router;
}
