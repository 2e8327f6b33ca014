import type { ButtonHTMLAttributes } from 'react';
import { classNames } from '../lib/format.ts';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost';

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: ButtonVariant;
  small?: boolean;
  /** Disables the button and says so to assistive technology while its action runs. */
  busy?: boolean;
}

export function Button({
  variant = 'secondary',
  small = false,
  busy = false,
  type = 'button',
  className,
  disabled,
  children,
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type}
      className={classNames('button', `button--${variant}`, small && 'button--small', className)}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {children}
    </button>
  );
}
