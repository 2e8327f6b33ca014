// `kbqa eval answers DIR --split conversations`: the dialogues of DIR/conversations.json (service/eval/
// conversationDataset.ts) asked through the real conversation API, one conversation per dialogue and KB, and the same
// facts asked alone through POST /api/v1/query of the same KB. It counts follow-ups whose answer holds the gold fact
// against the same facts asked as standalone questions (the issue's target: a ratio ≥ 0.85), topic-change turns
// against the same words asked alone (a change of topic must not be dragged back), and keeps each turn's
// standalone_query, so a miss shows what was searched.
import type { BenchKnowledgeBase, Share } from '../eval/answerReport.ts';
import { holdsGoldAnswer, isRefusal } from '../eval/answerScoring.ts';
import type { KbqaClient } from '../eval/apiClient.ts';
import { DIALOGUE_SPLITS, type Dialogue, type DialogueSplit, type TurnKind } from '../eval/conversationDataset.ts';

/** One turn as answered in its conversation. */
export interface TurnOutcome {
  dialogue: string;
  dialogue_split: DialogueSplit;
  /** 1-based. */
  turn: number;
  kind: TurnKind;
  knowledge_base: BenchKnowledgeBase;
  fact: string;
  query: string;
  standalone_query: string;
  answer: string;
  /** Cited documents in citation order (benchmark names; null for one that is not the benchmark's). */
  cited: Array<string | null>;
  refused: boolean;
  holds_gold: boolean;
  first_citation_right: boolean;
}

/** A question asked alone (POST /api/v1/query), outside any conversation. */
export interface AloneOutcome {
  knowledge_base: BenchKnowledgeBase;
  question: string;
  answer: string;
  /** Per gold fact it was compared with (the same words may be asked for several turns). */
  holds_gold: boolean;
  first_citation_right: boolean;
}

export interface ConversationSummary {
  dialogues: number;
  openings: Share;
  follow_ups: Share;
  /** The same facts as standalone questions (questions.json's, or the dialogue's `standalone`). */
  follow_ups_standalone: Share;
  /** follow_ups ÷ follow_ups_standalone, 3 decimals (the target is ≥ 0.85). */
  ratio: number | null;
  /** The follow-ups' words asked alone, without the conversation: what carrying the topic is worth. */
  follow_ups_as_written_alone: Share;
  follow_ups_right_source_first: Share;
  topic_changes: Share;
  /** The topic-change turns' words asked alone. */
  topic_changes_alone: Share;
  /** Topic-change turns searched exactly as written (standalone_query = the question). */
  topic_changes_searched_as_written: Share;
}

export interface ConversationResult {
  /** The answer model of the turns. */
  model: string;
  dialogues: number;
  follow_ups: number;
  topic_changes: number;
  /** Scope (`all`, `tune`, `held_out`) → KB → summary. */
  summary: Record<string, Record<BenchKnowledgeBase, ConversationSummary>>;
  turns: TurnOutcome[];
  /** Per KB and turn (same order as `turns`): the turn's fact asked standalone and its words asked alone. */
  alone: Array<{
    dialogue: string;
    turn: number;
    knowledge_base: BenchKnowledgeBase;
    standalone: AloneOutcome;
    as_written: AloneOutcome;
  }>;
}

export interface ConversationKnowledgeBase {
  label: BenchKnowledgeBase;
  id: string;
  /** Document id → its benchmark name. */
  documents: Map<string, { name: string }>;
}

interface Asked {
  answer: string;
  cited: Array<string | null>;
  refused: boolean;
}

function scored(asked: Asked, answers: string[], document: string) {
  return {
    holds_gold: !asked.refused && holdsGoldAnswer(asked.answer, answers),
    first_citation_right: asked.cited[0] === document,
  };
}

async function askAlone(client: KbqaClient, knowledgeBase: ConversationKnowledgeBase, query: string): Promise<Asked> {
  const { body } = await client.query({ query, knowledge_base_ids: [knowledgeBase.id] });
  return {
    answer: body.answer,
    cited: body.citations.map((citation) => knowledgeBase.documents.get(citation.document_id)?.name ?? null),
    refused: isRefusal(body),
  };
}

/** Every dialogue in its own conversation of this KB, turn by turn. */
async function askDialogues(
  client: KbqaClient,
  knowledgeBase: ConversationKnowledgeBase,
  dialogues: Dialogue[],
): Promise<{ outcomes: TurnOutcome[]; model: string }> {
  const outcomes: TurnOutcome[] = [];
  let model = '';
  for (const dialogue of dialogues) {
    const id = await client.startConversation([knowledgeBase.id], `eval ${dialogue.id}`);
    for (const [index, turn] of dialogue.turns.entries()) {
      const { message } = await client.askInConversation(id, { query: turn.query });
      model = message.model;
      const asked: Asked = {
        answer: message.answer,
        cited: message.citations.map((citation) => knowledgeBase.documents.get(citation.document_id)?.name ?? null),
        refused: isRefusal(message),
      };
      outcomes.push({
        dialogue: dialogue.id,
        dialogue_split: dialogue.split,
        turn: index + 1,
        kind: turn.kind,
        knowledge_base: knowledgeBase.label,
        fact: turn.fact,
        query: turn.query,
        standalone_query: message.standalone_query,
        answer: message.answer,
        cited: asked.cited,
        refused: asked.refused,
        ...scored(asked, turn.answers, turn.document),
      });
    }
  }
  return { outcomes, model };
}

function share(hits: number, of: number): Share {
  return { hits, of, share: of > 0 ? Math.round((hits / of) * 1000) / 1000 : null };
}

function summarizeConversations(
  turns: TurnOutcome[],
  alone: ConversationResult['alone'],
  dialogues: number,
): ConversationSummary {
  const aloneOf = new Map(alone.map((entry) => [`${entry.dialogue}/${entry.turn}`, entry]));
  const ofKind = (kind: TurnKind) => turns.filter((turn) => turn.kind === kind);
  const gold = (list: TurnOutcome[]) => share(list.filter((turn) => turn.holds_gold).length, list.length);
  const aloneGold = (list: TurnOutcome[], which: 'standalone' | 'as_written') =>
    share(list.filter((turn) => aloneOf.get(`${turn.dialogue}/${turn.turn}`)?.[which].holds_gold).length, list.length);
  const followUps = ofKind('follow_up');
  const topicChanges = ofKind('topic_change');
  const inConversation = gold(followUps);
  const standalone = aloneGold(followUps, 'standalone');
  return {
    dialogues,
    openings: gold(ofKind('opening')),
    follow_ups: inConversation,
    follow_ups_standalone: standalone,
    ratio: standalone.hits > 0 ? Math.round((inConversation.hits / standalone.hits) * 1000) / 1000 : null,
    follow_ups_as_written_alone: aloneGold(followUps, 'as_written'),
    follow_ups_right_source_first: share(
      followUps.filter((turn) => turn.first_citation_right).length,
      followUps.length,
    ),
    topic_changes: gold(topicChanges),
    topic_changes_alone: aloneGold(topicChanges, 'as_written'),
    topic_changes_searched_as_written: share(
      topicChanges.filter((turn) => turn.standalone_query === turn.query).length,
      topicChanges.length,
    ),
  };
}

/**
 * Asks every dialogue of each KB in a conversation of its own, then each turn's fact standalone and its words alone
 * (each distinct question once per KB), and sums up per scope (all dialogues, the tune ones, the held-out ones).
 */
export async function runDialogues(
  client: KbqaClient,
  knowledgeBases: ConversationKnowledgeBase[],
  dialogues: Dialogue[],
  log: (line: string) => void,
): Promise<ConversationResult> {
  const turns: TurnOutcome[] = [];
  const alone: ConversationResult['alone'] = [];
  let model = '';
  for (const knowledgeBase of knowledgeBases) {
    log(`asking ${dialogues.length} dialogues of the ${knowledgeBase.label} KB, each in a conversation of its own`);
    const asked = await askDialogues(client, knowledgeBase, dialogues);
    turns.push(...asked.outcomes);
    model = asked.model;
    const cache = new Map<string, Asked>();
    const once = async (query: string) => {
      if (!cache.has(query)) cache.set(query, await askAlone(client, knowledgeBase, query));
      return cache.get(query)!;
    };
    for (const dialogue of dialogues) {
      for (const [index, turn] of dialogue.turns.entries()) {
        const result = (query: string, asked: Asked): AloneOutcome => ({
          knowledge_base: knowledgeBase.label,
          question: query,
          answer: asked.answer,
          ...scored(asked, turn.answers, turn.document),
        });
        alone.push({
          dialogue: dialogue.id,
          turn: index + 1,
          knowledge_base: knowledgeBase.label,
          standalone: result(turn.standalone, await once(turn.standalone)),
          as_written: result(turn.query, await once(turn.query)),
        });
      }
    }
  }
  const summary: ConversationResult['summary'] = {};
  for (const scope of ['all', ...DIALOGUE_SPLITS] as const) {
    const inScope = (split: DialogueSplit) => scope === 'all' || split === scope;
    const count = dialogues.filter((dialogue) => inScope(dialogue.split)).length;
    if (count === 0) continue;
    const kbSummary = (label: BenchKnowledgeBase) =>
      summarizeConversations(
        turns.filter((turn) => turn.knowledge_base === label && inScope(turn.dialogue_split)),
        alone.filter((entry) => entry.knowledge_base === label),
        count,
      );
    summary[scope] = { pdf: kbSummary('pdf'), markdown: kbSummary('markdown') };
  }
  const ofKind = (kind: TurnKind) => dialogues.flatMap((dialogue) => dialogue.turns).filter((t) => t.kind === kind);
  return {
    model,
    dialogues: dialogues.length,
    follow_ups: ofKind('follow_up').length,
    topic_changes: ofKind('topic_change').length,
    summary,
    turns,
    alone,
  };
}

const cell = (value: Share) =>
  value.of === 0 ? '–' : `${value.hits}/${value.of} (${((value.share ?? 0) * 100).toFixed(1)} %)`;

const HEADER = [
  'dialogues',
  'KB',
  'follow-ups: gold fact',
  'same facts standalone',
  'ratio',
  'follow-ups asked alone as written',
  'follow-ups: right source first',
  'topic changes: gold fact',
  'topic changes asked alone',
  'topic changes searched as written',
  'openings: gold fact',
];

/** One row per scope and KB. */
export function conversationRows(result: ConversationResult): string[] {
  const rows = [`| ${HEADER.join(' | ')} |`, `|${HEADER.map(() => '---').join('|')}|`];
  for (const [scope, kbs] of Object.entries(result.summary)) {
    for (const kb of ['pdf', 'markdown'] as const) {
      const summary = kbs[kb];
      rows.push(
        `| ${[
          `${scope} (${summary.dialogues})`,
          kb === 'pdf' ? 'PDFs' : 'markdown twins',
          cell(summary.follow_ups),
          cell(summary.follow_ups_standalone),
          summary.ratio?.toFixed(3) ?? '–',
          cell(summary.follow_ups_as_written_alone),
          cell(summary.follow_ups_right_source_first),
          cell(summary.topic_changes),
          cell(summary.topic_changes_alone),
          cell(summary.topic_changes_searched_as_written),
          cell(summary.openings),
        ].join(' | ')} |`,
      );
    }
  }
  return rows;
}

/** The turns that missed their gold fact, each with what was searched and whether the fact alone was found. */
export function conversationMisses(result: ConversationResult): string[] {
  const quote = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const aloneOf = new Map(
    result.alone.map((entry) => [`${entry.knowledge_base}/${entry.dialogue}/${entry.turn}`, entry]),
  );
  return [
    '| KB | dialogue | turn | kind | question | standalone_query | cited first | answer | fact standalone |',
    '|---|---|---|---|---|---|---|---|---|',
    ...result.turns
      .filter((turn) => !turn.holds_gold)
      .map((turn) => {
        const alone = aloneOf.get(`${turn.knowledge_base}/${turn.dialogue}/${turn.turn}`);
        return `| ${turn.knowledge_base} | ${turn.dialogue} (${turn.dialogue_split}) | ${turn.turn} | ${turn.kind} | ${quote(turn.query)} | ${quote(turn.standalone_query)} | ${turn.cited[0] ?? '–'} | ${quote(turn.answer)} | ${alone?.standalone.holds_gold ? 'found' : 'missed'} |`;
      }),
  ];
}
