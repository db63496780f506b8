// A counting backend that can hold the next put of a merged segment at the door, so a test can land flushes while a
// merge is in flight and then let it finish: races made deterministic by events, not by timing.
import { parseDataKey } from '../../src/core/keys.js';
import type { Body, PutCondition } from '../../src/store/backend.js';
import { CountingBackend } from './counting-backend.js';

/** True for a merged segment's key (a segment whose min txid is below its max). */
export function isMergedKey(key: string): boolean {
  const d = parseDataKey(key);
  return d !== undefined && d.kind === 'segment' && d.minTxid < d.maxTxid;
}

/** A held merge: `entered` resolves with its key once it reached the put; `release()` lets the put through. */
export interface HeldMerge {
  entered: Promise<string>;
  release(): void;
}

/** Counts every call, and holds the next merged-segment put after `holdNextMerge()` until it is released. */
export class MergeGate extends CountingBackend {
  private held: { arrive: (key: string) => void; gate: Promise<void> } | undefined;

  /** Arms the gate for the next merged-segment put. */
  holdNextMerge(): HeldMerge {
    let arrive: (key: string) => void = () => undefined;
    let open: () => void = () => undefined;
    const entered = new Promise<string>((r) => {
      arrive = r;
    });
    const gate = new Promise<void>((r) => {
      open = r;
    });
    this.held = { arrive, gate };
    return { entered, release: open };
  }

  override async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    const held = this.held;
    if (held !== undefined && isMergedKey(key)) {
      this.held = undefined;
      held.arrive(key);
      await held.gate;
    }
    return super.put(key, body, cond);
  }
}
