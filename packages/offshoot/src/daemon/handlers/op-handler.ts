import type { Request, Response } from '../../protocol/wire.js';
import type { DaemonContext, Transport } from '../daemon-context.js';

/** One daemon op: validate the request, make one ops or session call, shape the response. */
export type OpHandler = (req: Request, d: DaemonContext, transport: Transport) => Promise<Response>;
