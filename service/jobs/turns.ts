// Requests' turns to run their own job in this process (IngestRunner.heldTurn): granted in arrival order under the
// caps the runner claims queued jobs under (its `concurrency` slots, `maxJobsPerUser` per owner), counted with the
// jobs it claimed.

/**
 * A request's place among the jobs of this process (IngestRunner.heldTurn): it counts under the caps from the moment
 * it is granted until end() (called once its job is over, or by the request when it fails before the job starts).
 */
export interface HeldTurn {
  readonly owner: string;
  end(): void;
}

/** What the runner tells the turns of the jobs it claimed and of its caps. */
export interface ClaimedJobs {
  /** Claimed jobs running past their PDF reading (those that take a slot). */
  slots: () => number;
  /** Claimed jobs of `owner` running. */
  ofOwner: (owner: string) => number;
  limits: () => { concurrency: number; maxJobsPerUser: number };
  /** A turn that filled the last slot ended: a queued job it held back may be claimed now. */
  lastSlotFreed: () => void;
}

export class RequestTurns {
  /** Requests waiting for a turn to run their own job, in arrival order (see take). */
  readonly #turnsWaiting: { owner: string; grant: () => void }[] = [];
  /** Turns granted and not ended, by owner. */
  readonly #turns = new Map<string, number>();
  readonly #claimed: ClaimedJobs;

  constructor(claimed: ClaimedJobs) {
    this.#claimed = claimed;
  }

  /** Waits for a turn of `owner` (see IngestRunner.heldTurn). */
  take(owner: string): Promise<HeldTurn> {
    return new Promise<HeldTurn>((resolve) => {
      let ended = false;
      const turn: HeldTurn = {
        owner,
        end: () => {
          if (ended) return;
          ended = true;
          // Only a turn that filled the last slot can have held a queued job back: then look for one now (otherwise
          // the regular poll finds any, and a waited-for request costs no extra read of the jobs).
          const wasFull = this.slotsUsed() >= this.#claimed.limits().concurrency;
          const left = (this.#turns.get(owner) ?? 1) - 1;
          if (left > 0) this.#turns.set(owner, left);
          else this.#turns.delete(owner);
          this.#grantTurns();
          if (wasFull) this.#claimed.lastSlotFreed();
        },
      };
      const grant = () => {
        this.#turns.set(owner, (this.#turns.get(owner) ?? 0) + 1);
        resolve(turn);
      };
      this.#turnsWaiting.push({ owner, grant });
      this.#grantTurns();
    });
  }

  /** Slots a claim may take: those free, less those a waiting request could take (requests go first). */
  slotsFree(): number {
    return (
      this.#claimed.limits().concurrency -
      this.slotsUsed() -
      (this.#turnsWaiting.length > 0 ? this.#turnsGrantable() : 0)
    );
  }

  /** Text jobs counted against `concurrency`: claimed ones running past their PDF reading, and granted turns. */
  slotsUsed(): number {
    const claimed = this.#claimed.slots();
    let turns = 0;
    for (const count of this.#turns.values()) turns += count;
    return claimed + turns;
  }

  /** The owner's jobs running here: claimed ones and granted turns. */
  #ownerRunning(owner: string): number {
    const claimed = this.#claimed.ofOwner(owner);
    return claimed + (this.#turns.get(owner) ?? 0);
  }

  #grantTurns(): void {
    const { concurrency, maxJobsPerUser } = this.#claimed.limits();
    for (let index = 0; index < this.#turnsWaiting.length && this.slotsUsed() < concurrency;) {
      const waiting = this.#turnsWaiting[index];
      if (this.#ownerRunning(waiting.owner) >= maxJobsPerUser) {
        index += 1;
        continue;
      }
      this.#turnsWaiting.splice(index, 1);
      waiting.grant();
    }
  }

  /** Waiting requests whose owner is under the cap: those a free slot would go to. */
  #turnsGrantable(): number {
    const owners = new Map<string, number>();
    let grantable = 0;
    for (const { owner } of this.#turnsWaiting) {
      const running = owners.get(owner) ?? this.#ownerRunning(owner);
      if (running >= this.#claimed.limits().maxJobsPerUser) continue;
      owners.set(owner, running + 1);
      grantable += 1;
    }
    return grantable;
  }
}
