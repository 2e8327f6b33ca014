export interface ProgressBarProps {
  value: number;
  max: number;
  label: string;
  /** What a screen reader says for the value; "value of max" when absent (e.g. "1.2 MB of 3.4 MB" for bytes). */
  valueText?: string;
}

/** A determinate bar; the fill's width is set through the CSSOM (React's style prop), which the CSP allows. */
export function ProgressBar({ value, max, label, valueText }: ProgressBarProps) {
  const safeMax = max > 0 ? max : 1;
  const clamped = Math.min(Math.max(value, 0), safeMax);
  const percent = Math.round((clamped / safeMax) * 100);
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={value}
      aria-valuetext={valueText ?? `${value} of ${max}`}
    >
      <div className="progress__fill" style={{ width: `${percent}%` }} />
    </div>
  );
}
