import { fileURLToPath } from 'node:url';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { startDaemon, type TestDaemon } from '@offshoot/client/testkit';
import { OffshootSaver } from '../../src/index.js';

process.env['OFFSHOOT_BIN'] = fileURLToPath(new URL('../../../../offshoot', import.meta.url));

let daemon: TestDaemon | undefined;
let sessions = 0;
validate({
  checkpointerName: 'OffshootSaver.session',
  beforeAllTimeout: 60_000,
  beforeAll: async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
  },
  afterAll: async () => {
    await daemon?.stop();
  },
  createCheckpointer: () => {
    if (daemon === undefined) throw new Error('the daemon did not start');
    return OffshootSaver.session(daemon.sock, `validate-${++sessions}`);
  },
  destroyCheckpointer: (saver) => saver.close(),
});
