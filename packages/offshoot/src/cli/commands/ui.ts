import type { Command } from '../command.js';
import { packageVersion } from '../package-version.js';

/** `offshoot ui [-listen ADDR]`: the read-only web dashboard for a store at rest, until SIGINT or SIGTERM. */
export const uiCommand: Command = {
  name: 'ui',
  summary: 'serve the read-only web dashboard (branch trees, storage, diffs) for a store at rest',
  examples: [
    'offshoot -store ./.offshoot ui',
    'offshoot -store s3://bucket/team ui -listen 127.0.0.1:7070',
    'OFFSHOOT_TOKEN=$(openssl rand -hex 32) offshoot -store s3://bucket/agents ui -listen 127.0.0.1:8080',
  ],
  usage: '[-listen ADDR] [-token T] [-allow-non-loopback]',
  help: [
    'Serves the dashboard on -listen (default 127.0.0.1:7879; port 0 picks a free one) and prints',
    '"offshoot ui serving on http://ADDR/". Every route needs the token: -token, else $OFFSHOOT_TOKEN, else a',
    'generated one, printed once on stderr as a URL ending in ?token=... (opening it sets a cookie).',
    'Read-only: no route changes the store. A non-loopback address needs -allow-non-loopback and an explicit token.',
    'For live sessions, events and metrics, run the daemon with it instead: offshoot serve -http 127.0.0.1:7878 -ui',
  ].join('\n'),
  flags: {
    listen: { type: 'string', value: 'ADDR', description: 'host:port to serve on (default 127.0.0.1:7879)' },
    token: {
      type: 'string',
      value: 'TOKEN',
      description: 'the token (at least 16 characters; default $OFFSHOOT_TOKEN, else generated)',
    },
    'allow-non-loopback': {
      type: 'boolean',
      description: 'allow a non-loopback -listen address (needs an explicit token)',
    },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const { checkUiListen, startUiServer } = await import('../../ui/ui-server.js');
    const token = inv.flags.string('token');
    const listen = inv.flags.string('listen');
    const cfg = checkUiListen({
      ...(listen !== undefined ? { listen } : {}),
      ...(token !== undefined ? { token } : {}),
      allowNonLoopback: inv.flags.boolean('allow-non-loopback'),
    });
    const ctx = await inv.context();
    const server = await startUiServer({ ctx, storeLabel: inv.storeSpec().text, version: packageVersion() }, cfg);
    const url = `http://${server.address}/`;
    if (cfg.tokenSource === 'generated') process.stderr.write(`offshoot: ui: open ${url}?token=${cfg.token}\n`);
    else process.stderr.write(`offshoot: ui: open ${url}?token=<your token>\n`);
    process.stdout.write(`offshoot ui serving on ${url}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
    return { data: { url, stopped: true }, text: '' };
  },
};
