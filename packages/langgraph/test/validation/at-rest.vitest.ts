import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { OffshootSaver } from '../../src/index.js';

const OFFSHOOT_BIN = fileURLToPath(new URL('../../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = OFFSHOOT_BIN;

let tmp: string | undefined;
let rested = 0;
validate({
  checkpointerName: 'OffshootSaver.atRest',
  beforeAllTimeout: 60_000,
  beforeAll: () => {
    tmp = mkdtempSync(join(tmpdir(), 'offshoot-validate-'));
    execFileSync(OFFSHOOT_BIN, ['-store', join(tmp, 'store'), 'init']);
  },
  afterAll: () => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  },
  createCheckpointer: () => {
    if (tmp === undefined) throw new Error('the store was not made');
    return OffshootSaver.atRest(join(tmp, 'store'), `validate-${++rested}`);
  },
  destroyCheckpointer: (saver) => saver.close(),
});
