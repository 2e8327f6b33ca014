// Email + password, shared by sign-in, sign-up and the first account. Password rules are checked here too (the
// server enforces them) so a short password is explained before any request.
import { useState, type FormEvent } from 'react';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { MIN_PASSWORD_LENGTH, PASSWORD_HINT, TextField } from '../../components/Field.tsx';
import type { Credentials } from '../../api/generated.ts';
import { PasswordError } from '../../components/PasswordError.tsx';

export interface CredentialsFormProps {
  submitLabel: string;
  pendingLabel: string;
  /** New accounts: the length rule is checked and explained; signing in takes any password. */
  newPassword: boolean;
  pending: boolean;
  error: unknown;
  onSubmit: (credentials: Credentials) => void;
}

export function CredentialsForm({
  submitLabel,
  pendingLabel,
  newPassword,
  pending,
  error,
  onSubmit,
}: CredentialsFormProps) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (newPassword && password.length < MIN_PASSWORD_LENGTH) {
      setProblem(`The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
      return;
    }
    setProblem(null);
    onSubmit({ email: email.trim(), password });
  }

  return (
    <form className="form" onSubmit={submit}>
      <TextField
        label="Email"
        type="email"
        name="email"
        autoComplete="email"
        required
        value={email}
        onChange={(event) => setEmail(event.target.value)}
      />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete={newPassword ? 'new-password' : 'current-password'}
        required
        minLength={newPassword ? MIN_PASSWORD_LENGTH : undefined}
        hint={newPassword ? PASSWORD_HINT : undefined}
        value={password}
        onChange={(event) => setPassword(event.target.value)}
      />
      {problem ? <ErrorMessage error={new Error(problem)} focusKey={problem} /> : null}
      {error && !problem ? (
        newPassword ? (
          <ErrorMessage error={error} focusKey={error} />
        ) : (
          <PasswordError error={error} wrong="The email or password is incorrect." />
        )
      ) : null}
      <Button type="submit" variant="primary" busy={pending}>
        {pending ? pendingLabel : submitLabel}
      </Button>
    </form>
  );
}
