// The branch log and moments as targets on S3 (the test server): the local suites' cases, at rest and through daemons.
import { describe, it } from 'node:test';
import { daemonLogStory } from '../daemon/daemon-log-cases.js';
import {
  lostSwapShowsNoDuplicate,
  momentsOnEveryVerb,
  recordsEveryVerb,
  spillsAndReads,
  windowHonouredByGc,
} from '../ops/history-cases.js';
import { s3Unavailable } from '../store/s3-test-env.js';
import { openS3TestStore } from './s3-store.js';

describe('branch log (S3)', () => {
  if (s3Unavailable('branch log (S3)')) return;
  it('every verb appends a record naming who asked and through what; a destroyed log says who', () =>
    recordsEveryVerb(openS3TestStore));
  it('the tail spills into log objects and reads back whole, in order, filtered', () =>
    spillsAndReads(openS3TestStore));
  it('a lost compare-and-swap after a spill shows no record twice', () => lostSwapShowsNoDuplicate(openS3TestStore));
  it('@tx: and @at: on export, read-only checkout, fork, rollback, diff and query', () =>
    momentsOnEveryVerb(openS3TestStore));
  it('GC honours the history window, then collects what it left', () => windowHonouredByGc(openS3TestStore));
  it('through daemons: records with their origin, durable across a restart and read by another daemon', () =>
    daemonLogStory('s3'));
});
