// Ask as a conversation: /ask starts one, /ask/<id> is one (Back, reload and a link keep it). Each question is a turn
// whose answer streams in as it is written, cites its sources with [n] markers, and takes a 👍/👎 with an optional
// comment. The question box stays at the bottom of the screen (sticky), so a phone reaches it after any number of
// turns. The answer is brought into view and focused when it starts, and announced once complete by a polite live
// region. Past conversations are listed beside the thread (below it on a phone), to open, rename or delete.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, isApiError } from '../../api/client.ts';
import type {
  Citation,
  ConversationWithMessages,
  Feedback,
  KnowledgeBaseListItem,
  RetrievedChunk,
  TurnRequest,
} from '../../api/generated.ts';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { ConversationList, titleOf } from './ConversationList.tsx';
import { KnowledgeBaseChoice } from './KnowledgeBaseChoice.tsx';
import { QuestionForm } from './QuestionForm.tsx';
import { Turn, type TurnView } from './Turn.tsx';
import { threadOf } from './thread.ts';

/** The turn being answered: shown in its conversation until its answer is stored. */
interface PendingTurn {
  /** null until a new conversation is created for it. */
  conversationId: string | null;
  key: string;
  question: string;
  text: string;
  citations: Citation[];
}

interface AskInput {
  conversationId: string | null;
  /** A new conversation's scope (empty: every KB reachable at each question). */
  knowledgeBaseIds: string[];
  request: TurnRequest;
  key: string;
}

export function AskScene() {
  const { conversationId } = useParams();
  const currentId = conversationId ?? null;
  const [searchParams] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const knowledgeBases = useQuery({ queryKey: queryKeys.knowledgeBases, queryFn: api.listKnowledgeBases });
  const conversation = useQuery({
    queryKey: queryKeys.conversation(currentId ?? ''),
    queryFn: () => api.getConversation(currentId ?? ''),
    enabled: currentId !== null,
  });
  useDocumentTitle(currentId && conversation.data ? titleOf(conversation.data.conversation) : 'Ask');

  const [selected, setSelected] = useState<string[]>(() => searchParams.getAll('kb'));
  const [pending, setPending] = useState<PendingTurn | null>(null);
  const [announcement, setAnnouncement] = useState('');
  /** A stored answer's turn key (the one it had while streaming), and the chunks it came with when asked for. */
  const turnKeys = useRef(new Map<string, string>());
  const turnChunks = useRef(new Map<string, RetrievedChunk[]>());
  const answerHeading = useRef<HTMLHeadingElement>(null);
  const sent = useRef(0);

  const updateConversation = (id: string, update: (current: ConversationWithMessages) => ConversationWithMessages) =>
    queryClient.setQueryData<{ conversation: ConversationWithMessages }>(queryKeys.conversation(id), (data) =>
      data ? { conversation: update(data.conversation) } : data,
    );

  const ask = useMutation({
    mutationFn: async ({ conversationId, knowledgeBaseIds, request, key }: AskInput) => {
      let id = conversationId;
      if (id === null) {
        const scope = knowledgeBaseIds.length > 0 ? { knowledge_base_ids: knowledgeBaseIds } : {};
        const created = await api.createConversation(scope);
        const newId = created.conversation.id;
        id = newId;
        queryClient.setQueryData(queryKeys.conversation(newId), {
          conversation: { ...created.conversation, messages: [] },
        });
        setPending((current) => current && { ...current, conversationId: newId });
        // The URL names the conversation from now on; the blank /ask it replaces is not worth a Back.
        navigate(`/ask/${encodeURIComponent(newId)}`, { replace: true });
      }
      const response = await api.askInConversationStreaming(id, request, {
        onDelta: (text, citations) =>
          setPending(
            (current) =>
              current && { ...current, text: current.text + text, citations: [...current.citations, ...citations] },
          ),
      });
      return { conversationId: id, message: response.message, key, question: request.query };
    },
    onSuccess: ({ conversationId, message, key, question }) => {
      turnKeys.current.set(message.id, key);
      if (message.chunks) turnChunks.current.set(message.id, message.chunks);
      const now = new Date().toISOString();
      updateConversation(conversationId, (current) => ({
        ...current,
        title: current.title ?? Array.from(question).slice(0, 80).join(''),
        updated_at: now,
        messages: [
          ...current.messages,
          { id: `${message.id}-question`, role: 'user', content: question, created_at: now },
          {
            id: message.id,
            role: 'assistant',
            content: message.answer,
            citations: message.citations,
            model: message.model,
            standalone_query: message.standalone_query,
            feedback: null,
            created_at: now,
          },
        ],
      }));
      setPending(null);
      setAnnouncement(`Answer: ${message.answer}`);
      void refetchAfterChange(queryClient, queryKeys.conversations, { exact: true });
    },
    onError: () => setPending(null),
  });

  function send(request: TurnRequest) {
    // Page-local (crypto.randomUUID needs a secure context, and the app may be served over plain HTTP).
    sent.current += 1;
    const key = `asked-${sent.current}`;
    setAnnouncement('');
    setPending({ conversationId: currentId, key, question: request.query, text: '', citations: [] });
    return ask.mutateAsync({ conversationId: currentId, knowledgeBaseIds: selected, request, key });
  }

  const onFeedback = (messageId: string, feedback: Feedback | null) => {
    if (!currentId) return;
    updateConversation(currentId, (current) => ({
      ...current,
      messages: current.messages.map((message) => (message.id === messageId ? { ...message, feedback } : message)),
    }));
  };

  const shownPending = pending && pending.conversationId === currentId ? pending : null;
  const turns: TurnView[] = threadOf(
    conversation.data?.conversation.messages ?? [],
    turnKeys.current,
    turnChunks.current,
  );
  if (shownPending) {
    turns.push({
      key: shownPending.key,
      question: shownPending.question,
      answer: shownPending.text,
      citations: shownPending.citations,
      model: null,
      messageId: null,
      feedback: null,
      chunks: null,
    });
  }
  const answerShown = shownPending !== null && shownPending.text !== '';
  // Once per question, when its answer first shows: into view and focused (Tab then reaches its citations).
  useEffect(() => {
    if (!answerShown) return;
    const heading = answerHeading.current;
    if (!heading) return;
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    heading.scrollIntoView({ behavior: smooth ? 'smooth' : 'auto', block: 'start' });
    heading.focus({ preventScroll: true });
  }, [answerShown]);

  const reachable = knowledgeBases.data?.knowledge_bases ?? [];
  const notFound = currentId !== null && isApiError(conversation.error, 404);

  return (
    <div className="ask">
      <div className="ask__main stack">
        <div className="page-header ask__header">
          <div>
            <h1>{currentId && conversation.data ? titleOf(conversation.data.conversation) : 'Ask'}</h1>
            <p className="muted">Answers come from your knowledge bases, with numbered citations to their sources.</p>
          </div>
          {currentId ? (
            <Link to="/ask" className="button button--secondary" data-testid="new-conversation">
              New conversation
            </Link>
          ) : null}
        </div>

        {notFound ? (
          <EmptyState title="This conversation does not exist, or it is not yours.">
            <p>
              <Link to="/ask">Start a new conversation</Link>
            </p>
          </EmptyState>
        ) : currentId === null ? (
          <KnowledgeBaseChoice
            knowledgeBases={knowledgeBases}
            selected={selected}
            onToggle={(kbId, checked) =>
              setSelected((current) => (checked ? [...current, kbId] : current.filter((id) => id !== kbId)))
            }
          />
        ) : conversation.isPending ? (
          <Loading label="Loading the conversation…" />
        ) : conversation.isError ? (
          <ErrorMessage error={conversation.error} onRetry={() => conversation.refetch()} />
        ) : (
          <Scope ids={conversation.data.conversation.knowledge_base_ids} reachable={reachable} />
        )}

        {turns.length > 0 ? (
          <div className="thread" data-testid="thread">
            {turns.map((turn, index) => (
              <Turn
                key={turn.key}
                turn={turn}
                n={index + 1}
                conversationId={currentId ?? ''}
                onFeedback={onFeedback}
                headingRef={turn.key === shownPending?.key ? answerHeading : undefined}
              />
            ))}
          </div>
        ) : null}
        {ask.isError ? <ErrorMessage title="No answer." error={ask.error} /> : null}
        {/* Announced once, complete: a region updated at every streamed sentence would read out fragments. */}
        <div role="status" aria-live="polite" className="visually-hidden" data-testid="answer-announcement">
          {announcement}
        </div>

        {notFound ? null : <QuestionForm busy={ask.isPending} writing={answerShown} onAsk={send} />}
      </div>
      <aside className="ask__aside">
        <ConversationList currentId={currentId} />
      </aside>
    </div>
  );
}

/** What an open conversation searches: chosen when it started. */
function Scope({ ids, reachable }: { ids: string[] | null; reachable: KnowledgeBaseListItem[] }) {
  if (ids === null) {
    return (
      <p className="small muted" data-testid="conversation-scope">
        Searches every knowledge base you can reach (except shares you have not accepted), at each question.
      </p>
    );
  }
  const names = ids.map((id) => reachable.find((kb) => kb.id === id)?.name ?? 'a knowledge base you cannot reach now');
  return (
    <p className="small muted" data-testid="conversation-scope">
      Searches {names.join(', ')}.
    </p>
  );
}
