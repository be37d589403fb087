import { connect } from "node:net";
import { freePort, HOST } from "./addresses";
import { firebaseToolsInternals, startInProcessEmulators } from "./firebase-tools-emulators";

/** Fails loudly, naming what moved, when a firebase-tools upgrade breaks what the local stack relies on. */
describe("the firebase-tools internals the local stack uses", () => {
  it("are all there in the installed firebase-tools", () => {
    expect(() => firebaseToolsInternals()).not.toThrow();
  });
});

/** Whether a keep-alive connection, after one answered request, is still open `idleMs` later. */
async function stillOpenAfterIdle(port: number, path: string, idleMs: number): Promise<boolean> {
  const socket = connect(port, HOST);
  let closed = false;
  socket.on("close", () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("data", () => resolve());
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nConnection: keep-alive\r\n\r\n`);
  });
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  socket.destroy();
  return !closed;
}

describe("the in-process Auth and Storage emulators", () => {
  it("leave closing an idle keep-alive connection to the client (whose agent drops it after 5 s), so no request lands on a socket being closed", async () => {
    const ports = { auth: await freePort(), storage: await freePort() };
    const emulators = await startInProcessEmulators("demo-keepalive", ports);
    try {
      const open = await Promise.all([stillOpenAfterIdle(ports.auth, "/", 6_000), stillOpenAfterIdle(ports.storage, "/b/demo-keepalive.appspot.com/o", 6_000)]);
      expect(open).toEqual([true, true]);
    } finally {
      await emulators.stop();
    }
  }, 30_000);
});
