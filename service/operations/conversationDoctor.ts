// `kbqa doctor`'s part for conversations: what an interrupted deletion (of a conversation, of an account) or a turn
// racing one leaves behind. Feedback lives on its answer (ConversationMessageRecord.feedback), so it cannot outlive
// the message: removing an orphan message removes its feedback.
import type { Store } from '../store/index.ts';

export interface ConversationFindings {
  /** Messages whose conversation record is gone (a turn stored while its conversation was deleted). */
  orphan_messages: Array<{ message_id: string; conversation_id: string }>;
  /** Conversations whose user is gone (an account deletion interrupted before its user record went). */
  conversations_of_deleted_users: Array<{ conversation_id: string; user_id: string }>;
}

export interface ConversationFixes {
  messages_removed: number;
  conversations_removed: number;
}

/** Users, then conversations, then messages: the reverse of the order they are written. */
export async function findConversationLeftovers(store: Store): Promise<ConversationFindings> {
  const users = new Set((await store.listUsers()).map((user) => user._id));
  const conversations = await store.listConversationOwners();
  const messages = await store.listMessageConversations();
  const conversationIds = new Set(conversations.map((conversation) => conversation._id));
  return {
    orphan_messages: messages
      .filter((message) => !conversationIds.has(message.conversation_id))
      .map((message) => ({ message_id: message._id, conversation_id: message.conversation_id })),
    conversations_of_deleted_users: conversations
      .filter((conversation) => !users.has(conversation.user_id))
      .map((conversation) => ({ conversation_id: conversation._id, user_id: conversation.user_id })),
  };
}

/** Each finding checked again right before it is removed (the report is a snapshot). */
export async function fixConversationLeftovers(
  store: Store,
  findings: ConversationFindings,
): Promise<ConversationFixes> {
  const fixed: ConversationFixes = { messages_removed: 0, conversations_removed: 0 };
  for (const leftover of findings.conversations_of_deleted_users) {
    if (await store.findUserById(leftover.user_id)) continue;
    await store.deleteConversation(leftover.conversation_id);
    fixed.conversations_removed += 1;
  }
  const gone = new Map<string, boolean>();
  const orphans: string[] = [];
  for (const orphan of findings.orphan_messages) {
    if (!gone.has(orphan.conversation_id))
      gone.set(orphan.conversation_id, (await store.findConversation(orphan.conversation_id)) === null);
    if (gone.get(orphan.conversation_id)) orphans.push(orphan.message_id);
  }
  fixed.messages_removed = await store.deleteMessages(orphans);
  return fixed;
}
