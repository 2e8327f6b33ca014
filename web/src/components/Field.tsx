// A labelled input or textarea with an optional hint tied to it by aria-describedby.
import { useId, type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes } from 'react';

interface FieldFrameProps {
  label: ReactNode;
  hint?: ReactNode;
}

export function TextField({ label, hint, id, ...input }: FieldFrameProps & InputHTMLAttributes<HTMLInputElement>) {
  const generated = useId();
  const fieldId = id ?? generated;
  const hintId = `${fieldId}-hint`;
  return (
    <div className="field">
      <label htmlFor={fieldId} className="field__label">
        {label}
      </label>
      <input id={fieldId} className="input" aria-describedby={hint ? hintId : undefined} {...input} />
      {hint ? (
        <p id={hintId} className="field__hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

export function TextAreaField({
  label,
  hint,
  id,
  ...textarea
}: FieldFrameProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const generated = useId();
  const fieldId = id ?? generated;
  const hintId = `${fieldId}-hint`;
  return (
    <div className="field">
      <label htmlFor={fieldId} className="field__label">
        {label}
      </label>
      <textarea id={fieldId} className="input textarea" aria-describedby={hint ? hintId : undefined} {...textarea} />
      {hint ? (
        <p id={hintId} className="field__hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

export function CheckboxField({
  label,
  hint,
  id,
  ...input
}: FieldFrameProps & Omit<InputHTMLAttributes<HTMLInputElement>, 'type'>) {
  const generated = useId();
  const fieldId = id ?? generated;
  const hintId = `${fieldId}-hint`;
  return (
    <div className="field field--checkbox">
      <input id={fieldId} type="checkbox" className="checkbox" aria-describedby={hint ? hintId : undefined} {...input} />
      <label htmlFor={fieldId}>{label}</label>
      {hint ? (
        <p id={hintId} className="field__hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

export const MIN_PASSWORD_LENGTH = 12;
export const PASSWORD_HINT = `At least ${MIN_PASSWORD_LENGTH} characters.`;
