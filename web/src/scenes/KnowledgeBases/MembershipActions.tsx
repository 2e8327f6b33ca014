// What the user does with a knowledge base shared with them: accept the invitation (it then answers questions that
// tick no knowledge base), decline it, or leave it later. Declining and leaving are the same request, confirmed
// first: only the owner can share it again.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { KnowledgeBase } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmDialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';

export function MembershipActions({ kb }: { kb: KnowledgeBase }) {
  const queryClient = useQueryClient();
  const [leaving, setLeaving] = useState(false);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: queryKeys.knowledgeBases });
  const accept = useMutation({ mutationFn: () => api.acceptKnowledgeBase(kb.id), onSuccess: refresh });
  const leave = useMutation({
    mutationFn: () => api.leaveKnowledgeBase(kb.id),
    onSuccess: () => {
      setLeaving(false);
      refresh();
    },
  });
  if (kb.role !== 'viewer') return null;

  return (
    <>
      {kb.pending ? (
        <Button small variant="primary" onClick={() => accept.mutate()} busy={accept.isPending}>
          Accept
        </Button>
      ) : null}
      <Button
        small
        onClick={() => {
          leave.reset();
          setLeaving(true);
        }}
      >
        {kb.pending ? 'Decline' : 'Leave'}
      </Button>
      {accept.error ? <ErrorMessage error={accept.error} /> : null}
      <ConfirmDialog
        open={leaving}
        title={`${kb.pending ? 'Decline' : 'Leave'} “${kb.name}”?`}
        onConfirm={() => leave.mutate()}
        onCancel={() => setLeaving(false)}
        confirmLabel={kb.pending ? 'Decline invitation' : 'Leave knowledge base'}
        busy={leave.isPending}
        error={leave.error}
      >
        <p>It leaves your list and your questions. Only its owner can share it with you again.</p>
      </ConfirmDialog>
    </>
  );
}
