import { type DaemonHandle, startDaemon } from '@offshoot/client/testkit';

/** The daemon an example talks to: OFFSHOOT_SOCKET's, or a private one on a temp store that reaps every second. */
export interface ExampleDaemon {
  sock: string;
  /** True when the example started its own daemon, whose janitor reaps every second. */
  private: boolean;
  stop(): Promise<void>;
}

/** Uses the daemon at OFFSHOOT_SOCKET when set; otherwise starts one (the offshoot from OFFSHOOT_BIN or PATH). */
export async function exampleDaemon(): Promise<ExampleDaemon> {
  const sock = process.env['OFFSHOOT_SOCKET'];
  if (sock !== undefined && sock !== '') return { sock, private: false, stop: async () => undefined };
  const daemon: DaemonHandle = await startDaemon({ serveArgs: ['-reap-every', '1s'] });
  return { sock: daemon.sock, private: true, stop: () => daemon.stop() };
}
