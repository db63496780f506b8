import { fail } from '../../core/errors.js';
import type { OpHandler } from './op-handler.js';

/**
 * `subscribe` reaches dispatch only where it cannot work: the unix socket turns the connection into an event stream
 * before dispatching, and a request/response transport has no stream to hand over.
 */
export const subscribeOp: OpHandler = async () => {
  throw fail('UNSUPPORTED', 'subscribe takes over a unix-socket connection and is not available here', {
    hint: 'send {"op":"subscribe"} on the unix socket, or use GET /events over HTTP',
  });
};
