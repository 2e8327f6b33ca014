// Another user's question while one key bursts (issue 31 §3): user B asks short questions one at a time, first with
// the API otherwise idle, then while user A keeps `connections` long questions (4,000 characters, max_results 50,
// include_chunks) in flight. A is a client that keeps trying: each connection sends its next question as soon as
// the last one is answered, and after a 429 waits the Retry-After the answer named (what the API asks of clients).
// B's p95 during the burst over B's p95 idle is the figure judged (target ≤ 3).
import { runSequentialQueries, type SequentialResult } from './sequential.ts';
import { round } from './stats.ts';

export interface BurstTraffic {
  connections: number;
  question_chars: number;
  max_results: number;
  include_chunks: boolean;
  /** Responses by status while B's questions ran (and until the burst's last request ended). */
  statuses: Record<string, number>;
  /** 429s that carried a Retry-After header (every 429 should). */
  rate_limited_with_retry_after: number;
  /** Answers (200) per second over the burst. */
  answered_per_s: number;
}

export interface QueryBurstResult {
  /** A's KB (the burst's questions) and B's (B's questions). */
  burst_knowledge_base_id: string;
  other_knowledge_base_id: string;
  idle: SequentialResult;
  during: SequentialResult;
  burst: BurstTraffic;
  /** B's p95 during the burst ÷ B's p95 idle. */
  p95_ratio: number;
  p50_ratio: number;
}

/** Target for p95_ratio (issue 31: within 3× of idle). */
export const BURST_RATIO_TARGET = 3;

/** `chars` characters of text made of `texts` (cycled), cut at a word boundary: one long question. */
export function longQuestion(texts: string[], chars: number, offset: number): string {
  let question = '';
  for (let index = offset; question.length < chars && texts.length > 0; index += 1) {
    question += `${texts[index % texts.length].replace(/\s+/g, ' ').trim()} `;
  }
  const cut = question.slice(0, chars);
  const lastSpace = cut.lastIndexOf(' ');
  return (lastSpace > chars / 2 ? cut.slice(0, lastSpace) : cut).trim();
}

/** A's connections: each sends question after question until `stop` resolves, waiting out any 429's Retry-After. */
function startBurst(options: {
  url: string;
  apiKey: string;
  bodies: Array<Record<string, unknown>>;
  connections: number;
}): { stop: () => Promise<BurstTraffic> } {
  const statuses: Record<string, number> = {};
  let withRetryAfter = 0;
  let answered = 0;
  let stopped = false;
  const started = performance.now();
  let wakeUp: () => void = () => undefined;
  const stopping = new Promise<void>((resolve) => (wakeUp = resolve));
  const connection = async (first: number) => {
    for (let sent = first; !stopped; sent += options.connections) {
      let status: number;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(`${options.url}/api/v1/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(options.bodies[sent % options.bodies.length]),
        });
        await response.arrayBuffer();
        status = response.status;
        retryAfter = response.headers.get('retry-after');
      } catch {
        status = 0;
      }
      statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
      if (status === 200) answered += 1;
      if (status === 429 && retryAfter !== null) {
        withRetryAfter += 1;
        const seconds = Number(retryAfter);
        if (Number.isFinite(seconds) && seconds > 0)
          await Promise.race([new Promise((resolve) => setTimeout(resolve, seconds * 1000)), stopping]);
      }
    }
  };
  const running = Array.from({ length: options.connections }, (_unused, index) => connection(index));
  return {
    async stop() {
      stopped = true;
      wakeUp();
      await Promise.all(running);
      const body = options.bodies[0];
      return {
        connections: options.connections,
        question_chars: String(body.query).length,
        max_results: Number(body.max_results),
        include_chunks: Boolean(body.include_chunks),
        statuses,
        rate_limited_with_retry_after: withRetryAfter,
        answered_per_s: round(answered / ((performance.now() - started) / 1000), 1),
      };
    },
  };
}

/** B alone, then B while A bursts: the same questions, the same count, one at a time. */
export async function measureQueryBurst(options: {
  url: string;
  /** A's key and the KB its long questions search. */
  burstKey: string;
  burstKnowledgeBaseId: string;
  burstTexts: string[];
  /** B's key, KB and (short) questions. */
  otherKey: string;
  otherKnowledgeBaseId: string;
  otherQuestions: string[];
  connections: number;
  log: (message: string) => void;
}): Promise<QueryBurstResult> {
  const bodies = options.otherQuestions.map((query) => ({ query, knowledge_base_ids: [options.otherKnowledgeBaseId] }));
  const idle = await runSequentialQueries({ url: options.url, apiKey: options.otherKey, bodies, warmup: 10 });
  options.log(
    `  idle: ${idle.queries} questions of user B, p50 ${idle.latency.p50_ms} ms, p95 ${idle.latency.p95_ms} ms`,
  );

  const burstBodies = Array.from({ length: options.connections * 2 }, (_unused, index) => ({
    query: longQuestion(options.burstTexts, 4000, index * 7),
    knowledge_base_ids: [options.burstKnowledgeBaseId],
    max_results: 50,
    include_chunks: true,
  }));
  const burst = startBurst({
    url: options.url,
    apiKey: options.burstKey,
    bodies: burstBodies,
    connections: options.connections,
  });
  // Let the burst fill every queue before B's first question.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  let during: SequentialResult;
  let traffic: BurstTraffic;
  try {
    during = await runSequentialQueries({ url: options.url, apiKey: options.otherKey, bodies, warmup: 0 });
  } finally {
    traffic = await burst.stop();
    options.log(
      `  burst of user A (${traffic.connections} connections of ${traffic.question_chars}-character questions): statuses ${JSON.stringify(traffic.statuses)}, ${traffic.rate_limited_with_retry_after} 429s with Retry-After, ${traffic.answered_per_s} answers/s`,
    );
  }
  options.log(
    `  during: ${during.queries} questions of user B (${during.failures} failed), p50 ${during.latency.p50_ms} ms, p95 ${during.latency.p95_ms} ms`,
  );
  return {
    burst_knowledge_base_id: options.burstKnowledgeBaseId,
    other_knowledge_base_id: options.otherKnowledgeBaseId,
    idle,
    during,
    burst: traffic,
    p95_ratio: round(during.latency.p95_ms / idle.latency.p95_ms, 3),
    p50_ratio: round(during.latency.p50_ms / idle.latency.p50_ms, 3),
  };
}

/** The report's section. */
export function renderQueryBurst(burst: QueryBurstResult | { error: string } | undefined): string[] {
  if (!burst) return [];
  const lines = ['', "## Another user's question while one key bursts", ''];
  if ('error' in burst) return [...lines, `**The phase failed:** ${burst.error}`];
  const traffic = burst.burst;
  lines.push(
    `User B asks ${burst.idle.queries} short questions one at a time, idle, then the same while user A keeps ${traffic.connections} ` +
      `${traffic.question_chars}-character questions (max_results ${traffic.max_results}, include_chunks ${traffic.include_chunks}) in flight, ` +
      "each connection sending its next as soon as one is answered and waiting any 429's Retry-After.",
    '',
    '| B | questions | failed | p50 ms | p95 ms | p99 ms | embed p50 | search p50 | answer p50 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const [name, run] of [
    ['idle', burst.idle],
    ['during the burst', burst.during],
  ] as const) {
    lines.push(
      `| ${name} | ${run.queries} | ${run.failures} | ${run.latency.p50_ms} | ${run.latency.p95_ms} | ${run.latency.p99_ms} | ${run.stages.embed?.p50_ms ?? 'n/a'} | ${run.stages.search?.p50_ms ?? 'n/a'} | ${run.stages.answer?.p50_ms ?? 'n/a'} |`,
    );
  }
  lines.push(
    '',
    `p95 during ÷ idle = **${burst.p95_ratio}** (target ≤ ${BURST_RATIO_TARGET}); p50 ${burst.p50_ratio}. ` +
      `A's answers by status: ${JSON.stringify(traffic.statuses)} (${traffic.rate_limited_with_retry_after} 429s with Retry-After; ${traffic.answered_per_s} answers/s).`,
  );
  return lines;
}
