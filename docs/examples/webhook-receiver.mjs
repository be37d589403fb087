// A webhook receiver (contract §21) with nothing but Node and `standardwebhooks`:
//   MARKETPLACE_WEBHOOK_SECRET=whsec_… PORT=4000 node webhook-receiver.mjs
// It verifies each delivery's signature on the raw body, answers 204 at once, and prints each
// message once (deliveries are at least once: a retry has the same webhook-id).
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const webhook = new Webhook(process.env.MARKETPLACE_WEBHOOK_SECRET); // whsec_…
const seen = new Set(); // in production, your database

createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/marketplace") return res.writeHead(404).end();
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let message;
    try {
      message = webhook.verify(body, req.headers); // throws on a bad signature or an old timestamp
    } catch {
      console.log(`refused a delivery that is not signed with this secret (${req.headers["webhook-id"] ?? "no webhook-id"})`);
      return res.writeHead(400).end();
    }
    res.writeHead(204).end(); // answer first; slow work afterwards (the attempt ends at 15 s)
    const id = req.headers["webhook-id"];
    if (seen.has(id)) return;
    seen.add(id);
    console.log(`${id} ${message.type} ${JSON.stringify(message.data)}`);
  });
}).listen(Number(process.env.PORT ?? 4000), "127.0.0.1", function () {
  console.log(`listening on http://127.0.0.1:${this.address().port}/marketplace`);
});
