export interface ProgressBarProps {
  value: number;
  max: number;
  label: string;
}

/** A determinate bar; the fill's width is set through the CSSOM (React's style prop), which the CSP allows. */
export function ProgressBar({ value, max, label }: ProgressBarProps) {
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
      aria-valuetext={`${value} of ${max}`}
    >
      <div className="progress__fill" style={{ width: `${percent}%` }} />
    </div>
  );
}
