/**
 * The head forks these tools made, by `db@branch`: the branch each came from and the head it was forked at. A
 * promote of one onto the branch it came from goes ahead only while that branch is still at that head (its
 * `if_head`, a compare-and-swap), so it never replaces work someone else promoted or checkpointed there meanwhile.
 */
export class ForkHeads {
  readonly #made = new Map<string, { base: string; head: number }>();

  /** Remembers `branches`, forked from the head of `db@base` at txid `head`. */
  remember(db: string, base: string, branches: readonly string[], head: number): void {
    for (const b of branches) this.#made.set(`${db}@${b}`, { base, head });
  }

  /**
   * The `if_head` of a promote of `db@source` onto `target`: the call's own when it names one, else the head a fork
   * these tools made of `target` started from, else none.
   */
  ifHead(db: string, source: string, target: string, given: number | undefined): number | undefined {
    if (given !== undefined) return given;
    const made = this.#made.get(`${db}@${source}`);
    return made?.base === target ? made.head : undefined;
  }
}
