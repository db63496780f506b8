// Two items and two trials each, every run in a fork that is kept (with its result checkpointed) for inspection.
import { execFileSync } from 'node:child_process';
import { createScorer, evalite } from 'evalite';
import { withFork } from '../../src/index.js';

evalite<number, string, string>('kept forks', {
  data: [
    { input: 1, expected: '0,1' },
    { input: 2, expected: '0,2' },
  ],
  trialCount: 2,
  task: withFork(
    (n, fork) => {
      execFileSync('sqlite3', [fork.path, `INSERT INTO t VALUES (${n})`]);
      return `${execFileSync('sqlite3', [fork.path, "SELECT group_concat(x, ',') FROM t"], { encoding: 'utf8' }).trim()}`;
    },
    { name: 'kept', keep: true, ttl: '2h' },
  ),
  scorers: [createScorer({ name: 'same', scorer: ({ output, expected }) => (output === expected ? 1 : 0) })],
});
