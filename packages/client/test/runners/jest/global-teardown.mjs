// Runs after every worker is done, in the same process as the global setup.
export default async function globalTeardown() {
  await globalThis.offshootDaemon?.stop();
}
