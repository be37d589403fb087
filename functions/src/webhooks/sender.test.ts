import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { createServer } from "node:http";
import { createSocket } from "node:dgram";
import { Webhook } from "standardwebhooks";
import { startLocalDns, type LocalDns } from "../../../tools/local-stack/dns-server";
import { publicAddresses, sendMessage } from "./sender";

/**
 * The sender against a local DNS server (DNS_RESOLVERS): a name is resolved once per attempt and
 * the connection goes to the address that was checked, so a name that turns private between save
 * and delivery (DNS rebinding) is refused before any connection.
 */
describe("webhook sender (§21)", () => {
  let dns: LocalDns;
  const secret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
  const message = { id: "msg_test", payload: '{"type":"webhook.test"}', secrets: [secret] };
  const now = () => new Date();

  beforeAll(async () => {
    dns = await startLocalDns();
  });
  afterAll(() => dns.stop());

  it("refuses at delivery a name that resolved to a public address when saved and to a private one now, without connecting", async () => {
    let connections = 0;
    const trap = createTcpServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
    const url = `https://rebind.test:${(trap.address() as AddressInfo).port}/hook`;
    const rules = { allowedHosts: [], dnsResolvers: [dns.address] };
    dns.set("rebind.test", "A", ["93.184.216.34"]);
    expect((await publicAddresses(url, rules)).addresses).toEqual(["93.184.216.34"]);
    dns.set("rebind.test", "A", ["127.0.0.1"]);
    const outcome = await sendMessage(url, message, rules, now);
    expect(outcome).toMatchObject({ statusCode: null, error: expect.stringContaining("resolves to 127.0.0.1, which is not a public address") });
    dns.set("rebind.test", "A", ["93.184.216.34", "10.0.0.7"]);
    expect((await sendMessage(url, message, rules, now)).error).toContain("resolves to 10.0.0.7");
    dns.set("rebind.test", "AAAA", ["::ffff:127.0.0.1"]);
    dns.set("rebind.test", "A", []);
    expect((await sendMessage(url, message, rules, now)).error).toContain("not a public address");
    expect(connections).toBe(0);
    await new Promise((resolve) => trap.close(resolve));
  });

  it("bounds the whole attempt, so a receiver that drips its answer fails (error timeout) within the bound", async () => {
    const timers: NodeJS.Timeout[] = [];
    const dripping = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      timers.push(setInterval(() => res.write("."), 20));
    });
    await new Promise<void>((resolve) => dripping.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(dripping.address() as AddressInfo).port}/hook`;
    const started = Date.now();
    const outcome = await sendMessage(url, message, { allowedHosts: ["127.0.0.1"], dnsResolvers: [] }, now, 400);
    expect(outcome).toMatchObject({ statusCode: null, error: "timeout" });
    // Every byte kept the connection busy, so an idle timeout would never have fired; the bound did, once.
    expect(Date.now() - started).toBeLessThan(5_000);
    timers.forEach(clearInterval);
    dripping.closeAllConnections();
    await new Promise((resolve) => dripping.close(resolve));
  });

  it("counts name resolution in the bound: a resolver that drops every query times the attempt out", async () => {
    // A DNS server that reads every query and answers none (the resolver would wait 2 s twice).
    const silent = createSocket("udp4");
    await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", resolve));
    const started = Date.now();
    const outcome = await sendMessage("https://dropped.test/hook", message, { allowedHosts: [], dnsResolvers: [`127.0.0.1:${silent.address().port}`] }, now, 300);
    expect(outcome).toMatchObject({ statusCode: null, error: "timeout" });
    expect(Date.now() - started).toBeLessThan(2_000);
    silent.close();
  });

  it("connects to the address it resolved and checked, not to a second lookup of the name, and signs", async () => {
    const received: { host?: string; body: string; headers: Record<string, string> }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        received.push({ host: req.headers.host, body, headers: req.headers as Record<string, string> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    // Only the local DNS server knows this name (the system's resolver does not): a delivery proves the pinned address was used.
    dns.set("receiver.test", "A", ["127.0.0.1"]);
    const outcome = await sendMessage(`http://receiver.test:${port}/in`, message, { allowedHosts: ["receiver.test"], dnsResolvers: [dns.address] }, now);
    expect(outcome.statusCode).toBe(204);
    expect(received).toHaveLength(1);
    expect(received[0].host).toBe(`receiver.test:${port}`);
    expect(new Webhook(secret).verify(received[0].body, received[0].headers)).toEqual({ type: "webhook.test" });
    await new Promise((resolve) => server.close(resolve));
  });

  it("does not follow a redirect: a 3xx is a failed attempt", async () => {
    const server = createServer((_req, res) => res.writeHead(302, { Location: "http://169.254.169.254/latest/meta-data" }).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const outcome = await sendMessage(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, message, { allowedHosts: ["127.0.0.1"], dnsResolvers: [] }, now);
    expect(outcome).toMatchObject({ statusCode: 302, error: "Redirect to http://169.254.169.254/latest/meta-data not followed." });
    await new Promise((resolve) => server.close(resolve));
  });
});
