// A writer to be killed while it holds a key lock: a compare-and-swap put of key argv[3] in the local store at
// argv[2]. The test makes the key a FIFO nobody writes, so the version check under the lock blocks reading it.
import { LocalBackend } from '../../src/store/local/local-backend.js';

const [root, key] = process.argv.slice(2);
if (root === undefined || key === undefined) {
  process.stderr.write('usage: lock-hold-worker.ts <root> <key>\n');
  process.exit(2);
}
await new LocalBackend(root).put(key, Buffer.from('never lands'), { ifMatch: '0'.repeat(64) });
