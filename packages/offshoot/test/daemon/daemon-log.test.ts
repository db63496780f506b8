// The branch log through real daemons on a local store (s3e2e/history-s3 runs the same story on S3).
import { describe, it } from 'node:test';
import { daemonLogStory } from './daemon-log-cases.js';

describe('branch log through the daemon (local store)', () => {
  it('records what SDK callers did with their origin, durable across a restart and read by another daemon', () =>
    daemonLogStory('local'));
});
