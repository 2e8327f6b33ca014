const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateOnly.format(date);
}

/** Similarity and scores as 0.00–1.00. */
export function formatScore(value: number | null | undefined, digits = 2): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '—';
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

export function classNames(...names: Array<string | false | null | undefined>): string {
  return names.filter(Boolean).join(' ');
}

const BYTE_UNITS = ['KB', 'MB', 'GB'] as const;

/**
 * Sizes in 1024 multiples under their familiar names, so the server's 50 MiB limit reads "50 MB": one decimal
 * below 100, none from there ("1.2 MB", "61 MB"), plain bytes below 1 KB.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} bytes`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const rounded = value < 100 ? Math.round(value * 10) / 10 : Math.round(value);
  return `${rounded} ${BYTE_UNITS[unit]}`;
}

/** A size next to a limit it exceeds: exact bytes when rounding would make both read the same. */
export function formatSizeOverLimit(size: number, limit: number): { size: string; limit: string } {
  const formatted = { size: formatBytes(size), limit: formatBytes(limit) };
  if (formatted.size !== formatted.limit) return formatted;
  const exact = new Intl.NumberFormat();
  return { size: `${exact.format(size)} bytes`, limit: `${exact.format(limit)} bytes` };
}
