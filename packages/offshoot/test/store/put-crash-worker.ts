// A writer to be killed mid-put: stores the file named by argv[4] (the test passes a FIFO it never closes, so
// the put blocks half-written) under key argv[3] in the local store at argv[2].
import { LocalBackend } from '../../src/store/local/local-backend.js';

const [root, key, file] = process.argv.slice(2);
if (root === undefined || key === undefined || file === undefined) {
  process.stderr.write('usage: put-crash-worker.ts <root> <key> <body-file>\n');
  process.exit(2);
}
await new LocalBackend(root).put(key, { file });
