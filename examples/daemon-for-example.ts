import { type DaemonHandle, startDaemon } from '@offshoot/client/testkit';

/** The daemon an example talks to: OFFSHOOT_SOCKET's, or a private one on a temp store. */
export interface ExampleDaemon {
  sock: string;
  /** True when the example started its own daemon (by default one whose janitor reaps every second). */
  private: boolean;
  stop(): Promise<void>;
}

/**
 * Uses the daemon at OFFSHOOT_SOCKET when set; otherwise starts one (the offshoot from OFFSHOOT_BIN or PATH) with
 * `serveArgs`, by default a janitor that reaps expired forks every second; `[]` keeps the daemon's defaults.
 */
export async function exampleDaemon(serveArgs: string[] = ['-reap-every', '1s']): Promise<ExampleDaemon> {
  const sock = process.env['OFFSHOOT_SOCKET'];
  if (sock !== undefined && sock !== '') return { sock, private: false, stop: async () => undefined };
  const daemon: DaemonHandle = await startDaemon({ serveArgs });
  return { sock: daemon.sock, private: true, stop: () => daemon.stop() };
}
