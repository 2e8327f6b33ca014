// A labelled input or textarea with an optional hint tied to it by aria-describedby.
import { useId, type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes } from 'react';

interface FieldFrameProps {
  label: ReactNode;
  hint?: ReactNode;
}

/** The control's id (given or generated) and its hint's, shared by every field kind. */
function useFieldIds(id: string | undefined, hint: ReactNode) {
  const generated = useId();
  const fieldId = id ?? generated;
  const hintId = `${fieldId}-hint`;
  return { fieldId, hintId, describedBy: hint ? hintId : undefined };
}

function Hint({ id, hint }: { id: string; hint: ReactNode }) {
  return hint ? (
    <p id={id} className="field__hint">
      {hint}
    </p>
  ) : null;
}

/** A label above its control and the hint below, the control given the ids that tie the three together. */
function LabelledField({
  label,
  hint,
  id,
  control,
}: FieldFrameProps & {
  id: string | undefined;
  control: (ids: { id: string; 'aria-describedby'?: string }) => ReactNode;
}) {
  const { fieldId, hintId, describedBy } = useFieldIds(id, hint);
  return (
    <div className="field">
      <label htmlFor={fieldId} className="field__label">
        {label}
      </label>
      {control({ id: fieldId, 'aria-describedby': describedBy })}
      <Hint id={hintId} hint={hint} />
    </div>
  );
}

export function TextField({ label, hint, id, ...input }: FieldFrameProps & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <LabelledField
      label={label}
      hint={hint}
      id={id}
      control={(ids) => <input {...ids} className="input" {...input} />}
    />
  );
}

export function TextAreaField({
  label,
  hint,
  id,
  ...textarea
}: FieldFrameProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return (
    <LabelledField
      label={label}
      hint={hint}
      id={id}
      control={(ids) => <textarea {...ids} className="input textarea" {...textarea} />}
    />
  );
}

export function CheckboxField({
  label,
  hint,
  id,
  ...input
}: FieldFrameProps & Omit<InputHTMLAttributes<HTMLInputElement>, 'type'>) {
  const { fieldId, hintId, describedBy } = useFieldIds(id, hint);
  return (
    <div className="field field--checkbox">
      <input id={fieldId} type="checkbox" className="checkbox" aria-describedby={describedBy} {...input} />
      <label htmlFor={fieldId}>{label}</label>
      <Hint id={hintId} hint={hint} />
    </div>
  );
}

/** The signed-in user's password, asked again: to change it, to create an API key. */
export function CurrentPasswordField({
  label,
  value,
  onChange,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <TextField
      label={label}
      type="password"
      autoComplete="current-password"
      required
      value={value}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}

export const MIN_PASSWORD_LENGTH = 12;
export const PASSWORD_HINT = `At least ${MIN_PASSWORD_LENGTH} characters.`;

/** "New password" and its confirmation: where a password is set (a set-password link, Settings → Account). */
export function NewPasswordFields(props: {
  password: string;
  confirmation: string;
  onPassword: (value: string) => void;
  onConfirmation: (value: string) => void;
}) {
  return (
    <>
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        minLength={MIN_PASSWORD_LENGTH}
        hint={PASSWORD_HINT}
        value={props.password}
        onChange={(event) => props.onPassword(event.target.value)}
      />
      <TextField
        label="Confirm new password"
        type="password"
        autoComplete="new-password"
        required
        minLength={MIN_PASSWORD_LENGTH}
        value={props.confirmation}
        onChange={(event) => props.onConfirmation(event.target.value)}
      />
    </>
  );
}
