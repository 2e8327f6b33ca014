// A conversation's history for an OpenAI-compatible model, as LangChain's history-aware retriever uses it: the
// previous turns as chat messages, bounded, and the condensing prompt that rewrites a follow-up as a standalone
// question (createHistoryAwareRetriever's "contextualize" step, written with @langchain/core: the `langchain`
// package is not a dependency). The extractive answerer has its own rewrite (standaloneQuery.ts).
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableLambda, type Runnable } from '@langchain/core/runnables';

/** A previous turn: the question as asked and the answer given. */
export interface HistoryTurn {
  question: string;
  answer: string;
}

/** Turns a model sees at most, and characters of each answer: the history is bounded in turns and in tokens. */
export const HISTORY_TURNS = 4;
export const HISTORY_ANSWER_CHARACTERS = 1_200;

/** The last HISTORY_TURNS turns as alternating human and AI messages, each answer cut to its bound. */
export function historyMessages(history: HistoryTurn[] | undefined): BaseMessage[] {
  return (history ?? [])
    .slice(-HISTORY_TURNS)
    .flatMap((turn) => [
      new HumanMessage(turn.question),
      new AIMessage(Array.from(turn.answer).slice(0, HISTORY_ANSWER_CHARACTERS).join('')),
    ]);
}

const CONDENSE_PROMPT = `Given the conversation so far and a follow-up question that may refer to it, rewrite the
follow-up as one standalone question that can be understood without the conversation. Do not answer it. If it is
already standalone, or changes the topic, return it as it is. Reply with the question only.`;

const condensePrompt = ChatPromptTemplate.fromMessages([
  ['system', CONDENSE_PROMPT],
  new MessagesPlaceholder('history'),
  ['human', 'Follow-up question: {question}'],
]);

export interface CondenseInput {
  history: HistoryTurn[];
  question: string;
}

/** The condensing chain: history and follow-up → the standalone question (one line, trimmed). */
export function condenseChain(chat: BaseChatModel): Runnable<CondenseInput, string> {
  const toPrompt = RunnableLambda.from((input: CondenseInput) => ({
    history: historyMessages(input.history),
    question: input.question,
  }));
  const firstLine = RunnableLambda.from((text: string) => text.trim().split('\n')[0]?.trim() ?? '');
  return toPrompt.pipe(condensePrompt).pipe(chat).pipe(new StringOutputParser()).pipe(firstLine);
}
