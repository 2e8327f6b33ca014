import { useEffect, useState } from 'react';
import { Button } from './Button.tsx';

type CopyState = 'idle' | 'copied' | 'failed';

/** Copies `text`; "Copied" (or how to copy by hand) appears beside the button in a status region. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<CopyState>('idle');

  useEffect(() => {
    if (state !== 'copied') return;
    const timer = window.setTimeout(() => setState('idle'), 3000);
    return () => window.clearTimeout(timer);
  }, [state]);

  async function copy() {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  }

  return (
    <span className="copy">
      <Button variant="primary" onClick={copy}>
        {label}
      </Button>
      <span role="status" className="copy__status">
        {state === 'copied'
          ? 'Copied'
          : state === 'failed'
            ? 'This browser blocked copying: select the text and copy it.'
            : ''}
      </span>
    </span>
  );
}
