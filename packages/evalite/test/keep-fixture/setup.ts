import { offshootSetup } from '../../src/index.js';

export default offshootSetup({ name: 'kept', seed: 'CREATE TABLE t(x); INSERT INTO t VALUES (0);' });
