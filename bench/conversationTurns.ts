// A conversation turn against /query, in the same run, on the same KB and the same questions: each question is asked
// through POST /api/v1/query and then as the next turn of a conversation, alternately, one at a time, so both see the
// same machine. A conversation takes TURNS_PER_CONVERSATION turns before the next one starts (follow-ups read the
// turns before them). The target: a turn's p50 within 10 ms of /query's (issue 33).
import { round, summarize, type LatencySummary } from './stats.ts';

export const TURN_P50_TARGET_MS = 10;
const TURNS_PER_CONVERSATION = 10;

export interface ConversationTurnsResult {
  questions: number;
  warmup_questions: number;
  turns_per_conversation: number;
  failures: { query: number; turn: number };
  query: LatencySummary;
  turn: LatencySummary;
  /** turn p50 − query p50. */
  p50_difference_ms: number;
  /** The median of (turn − query) over the same question: less sensitive to a loaded machine's drift. */
  median_paired_difference_ms: number;
  /** Messages stored in the run's database when it ended (a scan of them is what a turn must not do). */
  messages_stored: number;
}

export async function measureConversationTurns(options: {
  url: string;
  apiKey: string;
  knowledgeBaseId: string;
  questions: string[];
  warmup?: number;
  onProgress?: (done: number, total: number) => void;
}): Promise<ConversationTurnsResult> {
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  const post = async (path: string, body: Record<string, unknown>) => {
    const started = performance.now();
    const response = await fetch(`${options.url}/api/v1${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { ms: performance.now() - started, ok: response.ok, status: response.status, text };
  };
  let conversationId = '';
  let turnsInIt = TURNS_PER_CONVERSATION;
  const newConversation = async () => {
    const created = await post('/conversations', { knowledge_base_ids: [options.knowledgeBaseId] });
    if (!created.ok) throw new Error(`creating a conversation: HTTP ${created.status} ${created.text.slice(0, 200)}`);
    conversationId = (JSON.parse(created.text) as { conversation: { id: string } }).conversation.id;
    turnsInIt = 0;
  };
  const askBoth = async (query: string) => {
    const single = await post('/query', { query, knowledge_base_ids: [options.knowledgeBaseId] });
    if (turnsInIt >= TURNS_PER_CONVERSATION) await newConversation();
    const turn = await post(`/conversations/${conversationId}/messages`, { query });
    turnsInIt += 1;
    return { single, turn };
  };

  const warmup = Math.min(options.warmup ?? 5, options.questions.length);
  for (const query of options.questions.slice(-warmup)) await askBoth(query);
  const queries: number[] = [];
  const turns: number[] = [];
  const paired: number[] = [];
  const failures = { query: 0, turn: 0 };
  let messages = warmup * 2;
  for (const [index, query] of options.questions.entries()) {
    const { single, turn } = await askBoth(query);
    if (!single.ok) failures.query += 1;
    else queries.push(single.ms);
    if (!turn.ok) failures.turn += 1;
    else {
      turns.push(turn.ms);
      messages += 2;
    }
    if (single.ok && turn.ok) paired.push(turn.ms - single.ms);
    options.onProgress?.(index + 1, options.questions.length);
  }
  if (turns.length === 0 || queries.length === 0)
    throw new Error(`every query or every turn failed (${JSON.stringify(failures)})`);
  const query = summarize(queries);
  const turn = summarize(turns);
  return {
    questions: options.questions.length,
    warmup_questions: warmup,
    turns_per_conversation: TURNS_PER_CONVERSATION,
    failures,
    query,
    turn,
    p50_difference_ms: round(turn.p50_ms - query.p50_ms),
    median_paired_difference_ms: summarize(paired).p50_ms,
    messages_stored: messages,
  };
}

/** The report's section. */
export function renderConversationTurns(result: ConversationTurnsResult | { error: string } | undefined): string[] {
  if (!result) return [];
  const lines = ['', '## A conversation turn against /query', ''];
  if ('error' in result) return [...lines, `**The phase failed:** ${result.error}`];
  lines.push(
    `${result.questions} questions, each through POST /api/v1/query and then as the next turn of a conversation ` +
      `(${result.turns_per_conversation} turns each), alternately, one at a time, on the same KB; ${result.warmup_questions} warm-up pairs first.`,
    '',
    '| | answered | failed | p50 ms | p95 ms | p99 ms | mean ms |',
    '|---|---:|---:|---:|---:|---:|---:|',
    `| /query | ${result.query.count} | ${result.failures.query} | ${result.query.p50_ms} | ${result.query.p95_ms} | ${result.query.p99_ms} | ${result.query.mean_ms} |`,
    `| turn | ${result.turn.count} | ${result.failures.turn} | ${result.turn.p50_ms} | ${result.turn.p95_ms} | ${result.turn.p99_ms} | ${result.turn.mean_ms} |`,
    '',
    `Turn p50 − /query p50 = **${result.p50_difference_ms} ms** (target ≤ ${TURN_P50_TARGET_MS} ms); the median of the ` +
      `paired differences ${result.median_paired_difference_ms} ms; ${result.messages_stored} messages stored by the end.`,
  );
  return lines;
}
