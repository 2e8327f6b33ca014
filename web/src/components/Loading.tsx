export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div role="status" aria-busy="true" className="loading">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}
