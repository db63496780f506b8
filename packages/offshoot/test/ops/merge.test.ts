// offshoot merge against a local store: see merge-scenarios.ts.
import { describe } from 'node:test';
import { openTestStore } from './harness.js';
import { mergeScenarios } from './merge-scenarios.js';

describe('merge (local store)', () => {
  mergeScenarios(() => openTestStore(), [1, 2, 3, 4, 5, 6]);
});
