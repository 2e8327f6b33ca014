// Admins put a knowledge base in (or take it out of) the library, which every user can read. The list only tells
// us a knowledge base is in the library when that is the caller's role; for owned ones ShareDialog shows the
// sharing endpoint's is_library instead.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { KnowledgeBase } from '../../api/generated.ts';
import { CheckboxField } from '../../components/Field.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';

export function LibraryToggle({ kb, initial }: { kb: KnowledgeBase; initial?: boolean }) {
  const queryClient = useQueryClient();
  const [inLibrary, setInLibrary] = useState(initial ?? kb.role === 'library');
  const update = useMutation({
    mutationFn: (library: boolean) => api.setLibrary(kb.id, library),
    // The box follows the click at once (set in onChange, synchronously, as a controlled input needs) and goes
    // back if the server refuses.
    onError: (_error, library) => setInLibrary(!library),
    onSuccess: () => {
      void refetchAfterChange(queryClient, queryKeys.knowledgeBases, { exact: true });
      void refetchAfterChange(queryClient, queryKeys.sharing(kb.id));
    },
  });
  return (
    <div className="library-toggle">
      <CheckboxField
        label={
          <>
            Library<span className="visually-hidden"> ({kb.name})</span>
          </>
        }
        hint={initial === undefined ? undefined : 'Every user can read a knowledge base in the library.'}
        checked={inLibrary}
        disabled={update.isPending}
        onChange={(event) => {
          setInLibrary(event.target.checked);
          update.mutate(event.target.checked);
        }}
      />
      {update.error ? <ErrorMessage error={update.error} /> : null}
    </div>
  );
}
