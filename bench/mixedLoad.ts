// A steady mixed load for the resilience and soak runs: a fixed number of loops, each keeping one request in flight,
// picking a question (about a document acknowledged earlier) or an ingest of a new document with a sentence of its
// own, or (turnShare) the same question as the next turn of the loop's conversation. Every request is recorded (when, how long, what came back), so a report can cut the run into windows.
import { randomBytes } from 'node:crypto';

export interface RequestRecord {
  /** `turn`: a conversation turn, or the creation of the conversation it goes into. */
  kind: 'query' | 'ingest' | 'turn';
  /** ms since the epoch when the request was sent. */
  startedAt: number;
  ms: number;
  /** The HTTP status; 0 when no response came (connection refused or reset, or the client's timeout). */
  status: number;
  /** The envelope's error code, or the network error's name when there was no response. */
  code?: string;
  message?: string;
}

/** A document the API acknowledged (201, or 202 with a job), and the one sentence only it holds. */
export interface AcknowledgedDocument {
  id: string;
  knowledgeBaseId: string;
  question: string;
  acknowledgedAt: number;
  status: 201 | 202;
}

// Enough adjectives, objects and places that two documents rarely share the phrase a question asks about: the
// dense side cannot tell record codes apart, so near-duplicates would compete with the right document.
const ADJECTIVES = [
  'amber',
  'brass',
  'cedar',
  'copper',
  'crimson',
  'dented',
  'enamel',
  'faded',
  'gilded',
  'granite',
  'hazel',
  'indigo',
  'ivory',
  'jade',
  'lacquered',
  'linen',
  'maple',
  'nickel',
  'oaken',
  'olive',
  'pewter',
  'quilted',
  'rusted',
  'saffron',
  'scarlet',
  'silver',
  'slate',
  'tarnished',
  'velvet',
  'walnut',
];
const OBJECTS = [
  'compass',
  'kettle',
  'ledger',
  'whistle',
  'map',
  'lantern',
  'prism',
  'blanket',
  'sextant',
  'telescope',
  'anchor',
  'barometer',
  'bell',
  'chronometer',
  'flag',
  'harpoon',
  'hourglass',
  'inkwell',
  'jug',
  'key',
  'lamp',
  'mirror',
  'net',
  'oar',
  'padlock',
  'quadrant',
  'rope',
  'sail',
  'satchel',
  'spyglass',
  'teapot',
  'trunk',
  'umbrella',
  'violin',
  'wheel',
  'chart',
  'saddle',
  'helmet',
  'globe',
  'clock',
];
const PLACES = [
  'cabinet',
  'locker',
  'drawer',
  'crate',
  'shelf',
  'chest',
  'vault',
  'cupboard',
  'bin',
  'rack',
  'safe',
  'hold',
  'attic',
  'cellar',
  'pantry',
  'kiosk',
  'hangar',
  'stall',
  'booth',
  'annex',
];
const FILLER = [
  'The harbour office keeps an inventory of every item that passes through the customs shed.',
  'Each record is checked twice a year by the quartermaster and the duty clerk together.',
  'Items marked as fragile are wrapped in straw before they are stored.',
  'Records older than ten years move to the archive on the upper floor.',
];

/** A turn answered 200: its answer must be readable in its conversation afterwards. */
export interface AnsweredTurn {
  conversationId: string;
  messageId: string;
  answer: string;
}

/** A document with one fact nobody else's holds (its record code), and the question that finds it. */
export function uniqueDocument(): { filename: string; content: string; question: string } {
  const code = `kx${randomBytes(5).toString('hex')}`;
  const [adjective, noun, where] = randomBytes(3);
  const object = `${ADJECTIVES[adjective % ADJECTIVES.length]} ${OBJECTS[noun % OBJECTS.length]}`;
  const place = PLACES[where % PLACES.length];
  const number = 100 + (randomBytes(2).readUInt16BE() % 900);
  const sentence = `Inventory record ${code}: the ${object} is kept in ${place} ${number}.`;
  const content = `# Record ${code}\n\n${FILLER[0]} ${sentence} ${FILLER[1 + (number % 3)]}\n`;
  return {
    filename: `record-${code}.md`,
    content,
    question: `Where is the ${object} of inventory record ${code} kept?`,
  };
}

export interface MixedLoadOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  apiKey: string;
  knowledgeBaseIds: string[];
  /** Requests in flight (one per loop). */
  connections: number;
  /** Share of requests that ingest a document (0–1); the rest ask. */
  ingestShare: number;
  /** The client's timeout per request: a request still unanswered then counts as a hang (status 0, code "timeout"). */
  requestTimeoutMs: number;
  /** Ingest with `Prefer: respond-async` (202 at once) for this share of ingests. */
  asyncShare?: number;
  /** Share of the questions asked as a conversation turn instead of /query (0–1; default 0). */
  turnShare?: number;
}

export interface MixedLoad {
  records: RequestRecord[];
  acknowledged: AcknowledgedDocument[];
  answeredTurns: AnsweredTurn[];
  /** Resolves once no request sent before `time` is still in flight (each ends within the client's timeout). */
  settled(time: number): Promise<void>;
  /** Stops the loops; resolves once every request in flight has finished. */
  stop(): Promise<void>;
}

interface Envelope {
  error?: { code?: string; message?: string };
}

/** One request with the client's timeout: a status and a parsed body, or status 0 and the network error. */
export async function callApi(
  url: string,
  apiKey: string,
  method: string,
  path: string,
  body: unknown,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; ms: number; code?: string; message?: string }> {
  const started = performance.now();
  try {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    const envelope = (parsed ?? {}) as Envelope;
    return {
      status: response.status,
      body: parsed,
      ms: performance.now() - started,
      code: envelope.error?.code,
      message: envelope.error?.message,
    };
  } catch (error) {
    const name =
      error instanceof Error
        ? error.name === 'TimeoutError'
          ? 'timeout'
          : ((error.cause as Error | undefined)?.name ?? error.name)
        : 'error';
    const message =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    return { status: 0, body: null, ms: performance.now() - started, code: name, message };
  }
}

/** Turns one conversation of the load takes before its loop starts the next (each turn reads the ones before it). */
const TURNS_PER_CONVERSATION = 20;

export function startMixedLoad(options: MixedLoadOptions): MixedLoad {
  const records: RequestRecord[] = [];
  const acknowledged: AcknowledgedDocument[] = [];
  /** When each loop's request in flight was sent (null: between two requests). */
  const inFlightSince: Array<number | null> = Array.from({ length: options.connections }, () => null);
  let stopping = false;

  const answeredTurns: AnsweredTurn[] = [];
  /** Each loop's conversation and its turns so far (a new one after TURNS_PER_CONVERSATION). */
  const conversations: Array<{ id: string; turns: number } | null> = Array.from(
    { length: options.connections },
    () => null,
  );
  const send = async (kind: RequestRecord['kind'], path: string, body: unknown) => {
    const startedAt = Date.now();
    const answer = await callApi(options.url, options.apiKey, 'POST', path, body, options.requestTimeoutMs);
    records.push({ kind, startedAt, ms: answer.ms, status: answer.status, code: answer.code, message: answer.message });
    return answer;
  };

  /** The question as the next turn of the loop's conversation (started on the KBs, when it has none or a full one). */
  const turn = async (index: number, query: string) => {
    let conversation = conversations[index];
    if (!conversation || conversation.turns >= TURNS_PER_CONVERSATION) {
      const created = await send('turn', '/api/v1/conversations', { knowledge_base_ids: options.knowledgeBaseIds });
      if (created.status !== 201) return;
      conversation = { id: (created.body as { conversation: { id: string } }).conversation.id, turns: 0 };
      conversations[index] = conversation;
    }
    const answer = await send('turn', `/api/v1/conversations/${conversation.id}/messages`, { query });
    if (answer.status !== 200) return;
    conversation.turns += 1;
    const message = (answer.body as { message: { id: string; answer: string } }).message;
    answeredTurns.push({ conversationId: conversation.id, messageId: message.id, answer: message.answer });
  };

  const ask = async (index: number) => {
    const pool = acknowledged.filter(
      (document) => document.status === 201 || Date.now() - document.acknowledgedAt > 10_000,
    );
    const target = pool.length > 0 ? pool[Math.floor(Math.random() * pool.length)] : null;
    const query = target?.question ?? 'Where is the brass compass kept?';
    if (Math.random() < (options.turnShare ?? 0)) return turn(index, query);
    await send('query', '/api/v1/query', {
      query,
      knowledge_base_ids: target ? [target.knowledgeBaseId] : options.knowledgeBaseIds,
    });
  };

  const ingest = async () => {
    const document = uniqueDocument();
    const knowledgeBaseId = options.knowledgeBaseIds[Math.floor(Math.random() * options.knowledgeBaseIds.length)];
    const asynchronous = Math.random() < (options.asyncShare ?? 0);
    const startedAt = Date.now();
    const answer = await callApi(
      options.url,
      options.apiKey,
      'POST',
      '/api/v1/documents',
      { kb_id: knowledgeBaseId, filename: document.filename, content: document.content },
      options.requestTimeoutMs,
      asynchronous ? { prefer: 'respond-async' } : {},
    );
    records.push({
      kind: 'ingest',
      startedAt,
      ms: answer.ms,
      status: answer.status,
      code: answer.code,
      message: answer.message,
    });
    if (answer.status === 201 || answer.status === 202) {
      const id = (answer.body as { document?: { id?: string } }).document?.id;
      if (typeof id === 'string') {
        acknowledged.push({
          id,
          knowledgeBaseId,
          question: document.question,
          acknowledgedAt: Date.now(),
          status: answer.status,
        });
      }
    }
  };

  const loop = async (index: number) => {
    while (!stopping) {
      inFlightSince[index] = Date.now();
      if (Math.random() < options.ingestShare) await ingest();
      else await ask(index);
      inFlightSince[index] = null;
    }
  };
  const loops = Array.from({ length: options.connections }, (_unused, index) => loop(index));
  return {
    records,
    acknowledged,
    answeredTurns,
    async settled(time) {
      while (inFlightSince.some((since) => since !== null && since < time))
        await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** The records sent in [from, to). */
export function recordsBetween(records: RequestRecord[], from: number, to: number): RequestRecord[] {
  return records.filter((record) => record.startedAt >= from && record.startedAt < to);
}

/** Requests by status ("0" when no response came). */
export function countStatuses(records: RequestRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of records) counts[String(record.status)] = (counts[String(record.status)] ?? 0) + 1;
  return counts;
}
