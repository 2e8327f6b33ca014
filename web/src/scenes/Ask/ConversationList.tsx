// The user's conversations, most recently active first: each opens at /ask/<id>; rename (a dialog with the title)
// and delete (a dialog naming the action). Deleting the one open goes back to a new conversation.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, isApiError } from '../../api/client.ts';
import type { Conversation } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog, Dialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { TextField } from '../../components/Field.tsx';
import { Loading } from '../../components/Loading.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { formatDateTime } from '../../lib/format.ts';

const TITLE_MAX_CHARACTERS = 200;
export const titleOf = (conversation: Pick<Conversation, 'title'>) => conversation.title ?? 'New conversation';

export function ConversationList({ currentId }: { currentId: string | null }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const conversations = useQuery({ queryKey: queryKeys.conversations, queryFn: api.listConversations });
  const [renaming, setRenaming] = useState<Conversation | null>(null);
  const [title, setTitle] = useState('');
  const [deleting, setDeleting] = useState<Conversation | null>(null);

  const changed = (id: string) => {
    void refetchAfterChange(queryClient, queryKeys.conversations, { exact: true });
    void refetchAfterChange(queryClient, queryKeys.conversation(id));
  };
  const rename = useMutation({
    mutationFn: ({ id, title }: { id: string; title: string }) => api.renameConversation(id, title),
    onSuccess: (_, { id }) => {
      setRenaming(null);
      changed(id);
    },
  });
  const remove = useMutation({
    mutationFn: async (id: string) => {
      try {
        await api.deleteConversation(id);
      } catch (error) {
        // Already gone (deleted in another tab): what was asked for is done.
        if (!isApiError(error, 404)) throw error;
      }
    },
    onSuccess: (_, id) => {
      setDeleting(null);
      queryClient.removeQueries({ queryKey: queryKeys.conversation(id) });
      void refetchAfterChange(queryClient, queryKeys.conversations, { exact: true });
      if (id === currentId) navigate('/ask', { replace: true });
    },
  });

  function submitRename(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (renaming && title.trim() !== '') rename.mutate({ id: renaming.id, title: title.trim() });
  }

  return (
    <nav className="conversations" aria-labelledby="conversations-heading">
      <h2 id="conversations-heading" className="conversations__heading">
        Conversations
      </h2>
      {conversations.isPending ? (
        <Loading label="Loading conversations…" />
      ) : conversations.isError ? (
        <ErrorMessage error={conversations.error} onRetry={() => conversations.refetch()} />
      ) : conversations.data.conversations.length === 0 ? (
        <p className="small muted">None yet: your questions and their answers are kept here.</p>
      ) : (
        <ul className="conversations__list">
          {conversations.data.conversations.map((conversation) => (
            <li
              key={conversation.id}
              className="conversations__item"
              data-testid="conversation-row"
              data-conversation-id={conversation.id}
            >
              <Link
                to={`/ask/${encodeURIComponent(conversation.id)}`}
                className="conversations__link"
                aria-current={conversation.id === currentId ? 'page' : undefined}
              >
                <span className="conversations__title">{titleOf(conversation)}</span>
                <span className="small muted">{formatDateTime(conversation.updated_at)}</span>
              </Link>
              <div className="conversations__actions">
                <Button
                  small
                  variant="ghost"
                  aria-label={`Rename “${titleOf(conversation)}”`}
                  onClick={() => {
                    rename.reset();
                    setTitle(conversation.title ?? '');
                    setRenaming(conversation);
                  }}
                >
                  Rename
                </Button>
                <Button
                  small
                  variant="ghost"
                  aria-label={`Delete “${titleOf(conversation)}”`}
                  onClick={() => {
                    remove.reset();
                    setDeleting(conversation);
                  }}
                >
                  Delete
                </Button>
              </div>
            </li>
          ))}
        </ul>
      )}

      <Dialog
        open={renaming !== null}
        title={`Rename “${renaming ? titleOf(renaming) : ''}”`}
        onClose={() => setRenaming(null)}
        testId="rename-dialog"
        actions={
          <>
            <Button onClick={() => setRenaming(null)} disabled={rename.isPending}>
              Cancel
            </Button>
            <Button variant="primary" type="submit" form="rename-conversation" busy={rename.isPending}>
              Rename conversation
            </Button>
          </>
        }
      >
        <form id="rename-conversation" className="form" onSubmit={submitRename}>
          <TextField
            label="Title"
            required
            maxLength={TITLE_MAX_CHARACTERS}
            value={title}
            onChange={(event) => setTitle(event.target.value)}
          />
        </form>
        {rename.isError ? <ErrorMessage error={rename.error} /> : null}
      </Dialog>

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete “${deleting ? titleOf(deleting) : ''}”?`}
        onConfirm={() => deleting && remove.mutate(deleting.id)}
        onCancel={() => setDeleting(null)}
        confirmLabel="Delete conversation"
        cancelLabel="Keep it"
        busy={remove.isPending}
        error={remove.error}
      >
        <p>Its questions, answers and ratings are deleted. This cannot be undone.</p>
      </ConfirmDialog>
    </nav>
  );
}
