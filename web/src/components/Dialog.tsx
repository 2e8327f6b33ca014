// Dialogs on the native <dialog> with showModal(): the browser traps focus, makes the page behind inert and closes
// on Escape. Focus goes back to the control that opened it (or the main landmark when that control is gone).
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { Button } from './Button.tsx';
import { ErrorMessage } from './ErrorMessage.tsx';

export interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** Buttons at the bottom; without them the dialog gets a "Close" button. */
  actions?: ReactNode;
  testId?: string;
}

export function Dialog({ open, title, onClose, children, actions, testId }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const titleId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  // Unmounted while open (e.g. the page changed): still hand focus back.
  useEffect(() => () => restoreFocus(opener), []);

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      data-testid={testId}
      onClose={() => {
        restoreFocus(opener);
        onClose();
      }}
    >
      <h2 id={titleId} className="dialog__title">
        {title}
      </h2>
      <div className="dialog__body">{children}</div>
      <div className="dialog__actions">
        {actions ?? (
          <Button onClick={onClose} variant="secondary">
            Close
          </Button>
        )}
      </div>
    </dialog>
  );
}

function restoreFocus(opener: { current: HTMLElement | null }): void {
  const element = opener.current;
  opener.current = null;
  if (!element) return;
  if (element.isConnected) element.focus();
  else document.getElementById('main')?.focus();
}

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
  /** The confirming action runs: the buttons wait. */
  busy?: boolean;
  error?: unknown;
  /** What the confirming button does, in words: "Delete knowledge base", "Revoke key", "Stop ingestion". */
  confirmLabel: string;
  /** Default "Cancel". */
  cancelLabel?: string;
}

/** "Are you sure?" for destructive actions. Cancel comes first, so it is what showModal() focuses. */
export function ConfirmDialog({
  open,
  title,
  children,
  onConfirm,
  onCancel,
  busy,
  error,
  confirmLabel,
  cancelLabel = 'Cancel',
}: ConfirmDialogProps) {
  return (
    <Dialog
      open={open}
      title={title}
      onClose={onCancel}
      testId="confirm-dialog"
      actions={
        <>
          <Button onClick={onCancel} disabled={busy}>
            {cancelLabel}
          </Button>
          <Button variant="danger" onClick={onConfirm} busy={busy} data-testid="confirm-button">
            {confirmLabel}
          </Button>
        </>
      }
    >
      {children}
      {error ? <ErrorMessage error={error} /> : null}
    </Dialog>
  );
}
