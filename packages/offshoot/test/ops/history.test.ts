// The branch log and moments as targets on a local store (the S3 suite runs the same cases: s3e2e/history-s3).
import { describe, it } from 'node:test';
import {
  lostSwapShowsNoDuplicate,
  momentsOnEveryVerb,
  recordsEveryVerb,
  spillsAndReads,
  windowHonouredByGc,
} from './history-cases.js';
import { openTestStore } from './harness.js';

describe('branch log (local store)', () => {
  it('every verb appends a record naming who asked and through what; a destroyed log says who', () =>
    recordsEveryVerb(openTestStore));
  it('the tail spills into log objects and reads back whole, in order, filtered', () => spillsAndReads(openTestStore));
  it('a lost compare-and-swap after a spill shows no record twice', () => lostSwapShowsNoDuplicate(openTestStore));
  it('@tx: and @at: on export, read-only checkout, fork, rollback, diff and query', () =>
    momentsOnEveryVerb(openTestStore));
  it('GC honours the history window, then collects what it left', () => windowHonouredByGc(openTestStore));
});
