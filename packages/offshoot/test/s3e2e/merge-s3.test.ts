// offshoot merge against an s3:// store on the S3 test server: see ../ops/merge-scenarios.ts.
import { describe } from 'node:test';
import { mergeScenarios } from '../ops/merge-scenarios.js';
import { s3Unavailable } from '../store/s3-test-env.js';
import { openS3TestStore } from './s3-store.js';

describe('merge (S3 store)', () => {
  if (s3Unavailable('merge on S3')) return;
  mergeScenarios(() => openS3TestStore(), [7, 8]);
});
