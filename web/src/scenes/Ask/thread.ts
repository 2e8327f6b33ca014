import type { ConversationMessage, RetrievedChunk } from '../../api/generated.ts';
import type { TurnView } from './Turn.tsx';

/**
 * A conversation's stored messages as turns: each answer with the question before it. An answer keeps the key its
 * turn had while it streamed (`keys`), and the chunks it came with on this page (`chunks`: they are not stored).
 */
export function threadOf(
  messages: ConversationMessage[],
  keys: ReadonlyMap<string, string>,
  chunks: ReadonlyMap<string, RetrievedChunk[]>,
): TurnView[] {
  const turns: TurnView[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const question = messages[index - 1];
    turns.push({
      key: keys.get(message.id) ?? message.id,
      question: question?.role === 'user' ? question.content : '',
      answer: message.content,
      citations: message.citations ?? [],
      model: message.model ?? '',
      messageId: message.id,
      feedback: message.feedback ?? null,
      chunks: chunks.get(message.id) ?? null,
    });
  });
  return turns;
}
