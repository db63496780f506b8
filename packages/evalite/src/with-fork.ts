import { forkPerTest, type TestFork } from '@offshoot/client/testkit';
import { inject } from 'vitest';

/** Options of `withFork`. */
export interface WithForkOptions {
  /** Goes into each fork's branch name (`t-<worker>-<name>-…`). Default `item`. */
  name?: string;
  /** Each fork's TTL, so a crashed run's forks are reaped. Default `1h`. */
  ttl?: string;
  /**
   * Keep each fork after its item (its session closed, the TTL running) to inspect or promote it; default false:
   * the fork is destroyed once the task is done. A kept fork's last state is flushed as the checkpoint `result`.
   */
  keep?: boolean;
}

/**
 * Wraps an evalite task so each data item (and each trial) runs in its own fork of the seeded database, with a
 * live session: the task gets the fork (`fork.path` is the SQLite file to write) beside its input. Needs
 * `offshootSetup` as the run's global setup. A failure of offshoot fails the item with the client's OffshootError.
 */
export function withFork<I, O, V = undefined>(
  task: (input: I, fork: TestFork, variant: V) => O | Promise<O>,
  opts: WithForkOptions = {},
): (input: I, variant: V) => Promise<O> {
  return async (input, variant) => {
    // A fork thrown away after its item is ephemeral, never written to the store; a kept one is durable from the
    // start, so a failed item is there to inspect after the run's daemon has stopped.
    const fork = await forkPerTest({ sock: inject('offshootSock') }, inject('offshootSeed'), {
      name: opts.name ?? 'item',
      ...(opts.ttl === undefined ? {} : { ttl: opts.ttl }),
      origin: { surface: 'sdk:evalite/evalite' },
      ephemeral: opts.keep !== true,
    });
    if (!opts.keep) {
      try {
        return await task(input, fork, variant);
      } finally {
        await fork.close();
      }
    }
    try {
      const output = await task(input, fork, variant);
      await fork.flush('result');
      return output;
    } finally {
      await fork.client.closeSession(fork.db, fork.branch);
      await fork.client.close();
    }
  };
}
