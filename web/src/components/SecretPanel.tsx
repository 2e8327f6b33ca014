// A secret shown once (a new API key, an invitation link): it takes focus, so keyboard and screen-reader users land
// on it and its warning, with a Copy button, until the person says Done.
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { Button } from './Button.tsx';
import { CopyButton } from './CopyButton.tsx';

export interface SecretPanelProps {
  heading: ReactNode;
  /** What to read before the secret: its warning at least. */
  children: ReactNode;
  secret: string;
  testId: string;
  secretTestId: string;
  onDone: () => void;
}

export function SecretPanel({ heading, children, secret, testId, secretTestId, onDone }: SecretPanelProps) {
  const panel = useRef<HTMLDivElement>(null);
  const headingId = useId();
  useEffect(() => panel.current?.focus(), [secret]);
  return (
    <div ref={panel} className="key-panel" tabIndex={-1} role="region" aria-labelledby={headingId} data-testid={testId}>
      <h3 id={headingId}>{heading}</h3>
      {children}
      <div className="key-panel__value">
        <code data-testid={secretTestId} className="secret">
          {secret}
        </code>
        <CopyButton text={secret} />
      </div>
      <div>
        <Button onClick={onDone}>Done</Button>
      </div>
    </div>
  );
}
