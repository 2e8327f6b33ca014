// The user's API keys for the Developer API (/api/v1). A new key is shown in full once, right after creation.
// Creating one asks for the password in a dialog: a key outlives every session, so a session alone (a borrowed
// browser, a stolen cookie) must not be enough to mint one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, API_DOCS_PATH } from '../../api/client.ts';
import type { ApiKey, CreatedApiKey } from '../../api/generated.ts';
import { Button } from '../../components/Button.tsx';
import { SecretPanel } from '../../components/SecretPanel.tsx';
import { ConfirmDialog, Dialog } from '../../components/Dialog.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { CurrentPasswordField, TextField } from '../../components/Field.tsx';
import { Loading } from '../../components/Loading.tsx';
import { PasswordError } from '../../components/PasswordError.tsx';
import { Badge } from '../../components/StatusBadge.tsx';
import { queryKeys } from '../../hooks/queryKeys.ts';
import { refetchAfterChange } from '../../hooks/refetchAfterChange.ts';
import { useDocumentTitle } from '../../hooks/useDocumentTitle.ts';
import { formatDateTime } from '../../lib/format.ts';
import { SettingsNav } from './SettingsNav.tsx';

export function ApiKeysScene() {
  useDocumentTitle('API keys');
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: queryKeys.apiKeys, queryFn: api.listApiKeys });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [password, setPassword] = useState('');

  const create = useMutation({
    mutationFn: api.createApiKey,
    onSuccess: (answer) => {
      setCreated(answer);
      setName('');
      setPassword('');
      setConfirming(false);
      void refetchAfterChange(queryClient, queryKeys.apiKeys);
    },
  });
  const revoke = useMutation({
    mutationFn: (key: ApiKey) => api.revokeApiKey(key.id),
    onSuccess: () => {
      setRevoking(null);
      void refetchAfterChange(queryClient, queryKeys.apiKeys);
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setCreated(null);
    create.reset();
    setConfirming(true);
  }

  function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({ name: name.trim(), password });
  }

  return (
    <div className="stack">
      <div className="page-header">
        <h1>Settings</h1>
        <SettingsNav />
      </div>

      <section className="card" aria-labelledby="create-key-heading">
        <h2 id="create-key-heading">Create API key</h2>
        <p className="muted">
          A key lets a program use the Developer API as you: send it as <code>Authorization: Bearer &lt;key&gt;</code>.
          What it can do: the <a href={API_DOCS_PATH}>Developer API reference</a>.
        </p>
        <form className="form form--inline" onSubmit={submit}>
          <TextField
            label="Name"
            required
            maxLength={100}
            hint="What the key is for, e.g. “CI pipeline”."
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
          <div className="form__submit">
            <Button type="submit" variant="primary">
              Create key
            </Button>
          </div>
        </form>
        {created ? <NewKeyPanel created={created} onDone={() => setCreated(null)} /> : null}
      </section>

      <Dialog
        open={confirming}
        title="Confirm with your password"
        testId="api-key-password-dialog"
        onClose={() => {
          setConfirming(false);
          setPassword('');
        }}
        actions={
          <>
            <Button onClick={() => setConfirming(false)} disabled={create.isPending}>
              Cancel
            </Button>
            <Button type="submit" form="api-key-password-form" variant="primary" busy={create.isPending}>
              {create.isPending ? 'Creating…' : 'Create key'}
            </Button>
          </>
        }
      >
        <form id="api-key-password-form" className="form" onSubmit={confirm}>
          <p>
            A key works until it is revoked, whatever happens to this session: enter your password to create “
            {name.trim()}”.
          </p>
          <CurrentPasswordField label="Your password" value={password} onChange={setPassword} />
          {create.error ? <PasswordError error={create.error} wrong="That is not your password." /> : null}
        </form>
      </Dialog>

      <section className="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading">Your API keys</h2>
        {keys.isPending ? (
          <Loading label="Loading API keys…" />
        ) : keys.isError ? (
          <ErrorMessage error={keys.error} onRetry={() => keys.refetch()} />
        ) : keys.data.api_keys.length === 0 ? (
          <EmptyState title="No API keys yet.">
            <p>Create one above to use the Developer API.</p>
          </EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="table table--stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.api_keys.map((key) => (
                  <tr
                    key={key.id}
                    data-testid="api-key-row"
                    data-key-name={key.name}
                    data-status={key.revoked_at ? 'revoked' : 'active'}
                  >
                    <td data-label="Name" className="break-words">
                      {key.name}
                    </td>
                    <td data-label="Key">
                      <code className="break-all">{key.masked}</code>
                    </td>
                    <td data-label="Created" className="nowrap">
                      <time dateTime={key.created_at}>{formatDateTime(key.created_at)}</time>
                    </td>
                    <td data-label="Last used" className="nowrap">
                      {key.last_used_at ? (
                        <time dateTime={key.last_used_at}>{formatDateTime(key.last_used_at)}</time>
                      ) : (
                        'never'
                      )}
                    </td>
                    <td data-label="Status">
                      {key.revoked_at ? <Badge tone="danger">revoked</Badge> : <Badge tone="accent">active</Badge>}
                    </td>
                    <td data-label="Actions" className="actions-cell">
                      {key.revoked_at ? null : (
                        <Button
                          small
                          variant="danger"
                          onClick={() => {
                            revoke.reset();
                            setRevoking(key);
                          }}
                        >
                          Revoke
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke “${revoking?.name ?? ''}”?`}
        onConfirm={() => revoking && revoke.mutate(revoking)}
        onCancel={() => setRevoking(null)}
        confirmLabel="Revoke key"
        busy={revoke.isPending}
        error={revoke.error}
      >
        <p>Programs using this key stop working at once. This cannot be undone.</p>
      </ConfirmDialog>
    </div>
  );
}

function NewKeyPanel({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  return (
    <SecretPanel
      heading={`Your new key “${created.api_key.name}”`}
      secret={created.key}
      testId="new-api-key"
      secretTestId="api-key-value"
      onDone={onDone}
    >
      <p className="key-panel__warning">This key will not be shown again. Copy it now.</p>
    </SecretPanel>
  );
}
