import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What a receiver got: one request each. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver on 127.0.0.1 (contract §21's tests): it keeps every request, and answers
 * each path with the statuses queued for it (then 200), with any headers given.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const answers = new Map<string, { status: number; headers?: Record<string, string> }[]>();
  /** Paths whose requests are held open until released, with how many are open now and the most ever open at once. */
  const held = new Map<string, { waiting: (() => void)[]; open: number; mostOpen: number }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const answer = answers.get(path)?.shift() ?? { status: 200 };
      const respond = () => res.writeHead(answer.status, answer.headers ?? {}).end("ok");
      const holding = held.get(path);
      if (!holding) {
        respond();
        return;
      }
      holding.open += 1;
      holding.mostOpen = Math.max(holding.mostOpen, holding.open);
      holding.waiting.push(() => {
        holding.open -= 1;
        respond();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    /** The requests that came to a path. */
    at: (path: string) => received.filter((request) => request.path === path),
    /** Answers the next requests to a path with these statuses, in order. */
    answer: (path: string, ...statuses: (number | { status: number; headers?: Record<string, string> })[]) =>
      answers.set(path, [...(answers.get(path) ?? []), ...statuses.map((status) => (typeof status === "number" ? { status } : status))]),
    /** Holds every request to a path open (none is answered) until `release`; `open` and `mostOpen` count them. */
    hold: (path: string) => {
      const holding = { waiting: [] as (() => void)[], open: 0, mostOpen: 0 };
      held.set(path, holding);
      return {
        open: () => holding.open,
        mostOpen: () => holding.mostOpen,
        /** Answers what is held and stops holding. */
        release: () => {
          held.delete(path);
          for (const respond of holding.waiting.splice(0)) respond();
        },
      };
    },
    stop: () => {
      for (const holding of held.values()) for (const respond of holding.waiting.splice(0)) respond();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
