import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { validate } from '@langchain/langgraph-checkpoint-validation';

// The stock saver in the same run is the yardstick: OffshootSaver must pass every test it passes.
validate({
  checkpointerName: 'stock SqliteSaver',
  createCheckpointer: () => SqliteSaver.fromConnString(':memory:'),
  destroyCheckpointer: (saver) => {
    saver.db.close();
  },
});
