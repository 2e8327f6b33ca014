// A queue served round-robin by owner: each owner's items in the order they came, the owners in turn. An owner with a
// thousand items waiting delays another owner's first item by at most one of its own (issue 31 §3: one key's burst
// of questions must not queue everyone else's behind it). Used by the model pool's question lane (rag/modelPool.ts);
// it imports nothing, so any layer may.

export class FairQueue<T> {
  // A Map iterates in insertion order: the owner at its front is the next to be served, and an owner served moves
  // to the back (deleted and set again) while it still has items waiting.
  private readonly byOwner = new Map<string, T[]>();
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Items waiting per owner (for metrics and tests). */
  waitingOf(owner: string): number {
    return this.byOwner.get(owner)?.length ?? 0;
  }

  push(owner: string, item: T): void {
    const items = this.byOwner.get(owner);
    if (items) items.push(item);
    else this.byOwner.set(owner, [item]);
    this.count += 1;
  }

  /** The next item: the first of the owner whose turn it is; that owner then goes to the back of the turn. */
  shift(): T | undefined {
    for (const [owner, items] of this.byOwner) {
      const item = items.shift();
      this.byOwner.delete(owner);
      if (items.length > 0) this.byOwner.set(owner, items);
      if (item === undefined) continue;
      this.count -= 1;
      return item;
    }
    return undefined;
  }

  /** Takes `item` out of line (it gave up waiting); false when it is not waiting. */
  remove(owner: string, item: T): boolean {
    const items = this.byOwner.get(owner);
    const index = items?.indexOf(item) ?? -1;
    if (!items || index < 0) return false;
    items.splice(index, 1);
    if (items.length === 0) this.byOwner.delete(owner);
    this.count -= 1;
    return true;
  }

  /** Every item still waiting, in no particular order; the queue is left empty. */
  drain(): T[] {
    const all = [...this.byOwner.values()].flat();
    this.byOwner.clear();
    this.count = 0;
    return all;
  }
}
