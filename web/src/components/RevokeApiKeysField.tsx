import { CheckboxField } from './Field.tsx';

/**
 * The offer to revoke every API key with a password change, a reset or "sign out everywhere": a key outlives every
 * session, so someone who had the account may still hold one.
 */
export function RevokeApiKeysField({ checked, onChange }: { checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <CheckboxField
      label="Also revoke all my API keys"
      hint="Programs using them stop working at once. Tick it if someone else may have used your account."
      checked={checked}
      onChange={(event) => onChange(event.target.checked)}
    />
  );
}
