/**
 * Rows of `npm run bench` at Firestore's production limits (§25, §28), each over two API processes
 * on the same emulators, with the busiest document's writes per second and the largest commit
 * (reportLimits): 10 SCIM clients creating users with seats counted, a seat raise with 10,000
 * waiting members seated by the seat balancer while SCIM PATCHes go on, 200 concurrent confirms
 * of one module, and 100 update checks a second.
 */
import autocannon from "autocannon";
import type { MemberRecord } from "../functions/src/accounts/business-records";
import { memberStore } from "../functions/src/accounts/member-store";
import { subscriptionStore } from "../functions/src/accounts/subscription-store";
import { addMember, createBusiness } from "../functions/src/businesses/operators";
import { systemActor } from "../functions/src/core/audit-log";
import type { Deps } from "../functions/src/deps";
import { verifyDomainForBusiness } from "../functions/src/domains/service";
import { createScimToken } from "../functions/src/scim/tokens";
import { balanceSeats } from "../functions/src/seats/balance";
import { percentile, quick, report, reportLimits, startLimits, type BenchServer } from "./bench-harness";

const tally = (statuses: number[]) => [...statuses.reduce((counts, status) => counts.set(status, (counts.get(status) ?? 0) + 1), new Map<number, number>())].map(([status, count]) => `${count}× ${status}`).join(", ");

/** A business with a SCIM token, a verified domain and a subscription of `seats`, its seats' shares worked out as the balancer does. */
async function scimBusiness(deps: Deps, id: string, seats: number) {
  const domain = `${id}.example.test`;
  await createBusiness(deps, { id, name: id });
  const owner = await deps.auth.createUser({ email: `owner@${domain}`, password: "bench-owner-password", emailVerified: true });
  await addMember(deps, { id, user: owner.uid, role: "owner" });
  await verifyDomainForBusiness(deps, { id, domain });
  const { token } = await createScimToken(deps, { uid: owner.uid, signInProvider: "password" }, systemActor("bench"), id, "bench");
  await setSeats(deps, id, seats);
  return { id, domain, token };
}

/** The paid quantity, as Stripe's webhook writes it (which marks the seats pending for the balancer). */
async function setSeats(deps: Deps, businessId: string, seats: number): Promise<void> {
  await deps.db.runTransaction(async (tx) => {
    subscriptionStore(deps.db).setIn(tx, businessId, { status: "active", plan: "team", seats, entitlements: ["pro"], currentPeriodEnd: new Date(Date.now() + 30 * 86_400_000), cancelAtPeriodEnd: false, stripe: null });
  });
}

const scimUser = (email: string) => ({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, name: { givenName: "Bench", familyName: "User" }, emails: [{ value: email, type: "work", primary: true }], active: true });

async function scim(server: BenchServer, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${server.origin}/api/v1/scim/v2${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/scim+json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/** 10 SCIM clients, five on each instance, create users in a business whose seats are counted. */
async function scimClients(deps: Deps, servers: BenchServer[]) {
  const creates = quick ? 200 : 600;
  const target = await scimBusiness(deps, "bench-clients", creates * 2);
  await balanceSeats(deps, target.id);
  const since = await startLimits(servers);
  const answers: { status: number; ms: number }[] = [];
  await Promise.all(
    Array.from({ length: 10 }, async (_, client) => {
      for (let index = client; index < creates; index += 10) answers.push(await scim(servers[client % 2], target.token, "POST", "/Users", scimUser(`u${index}@${target.domain}`)));
    }),
  );
  const seatsUsed = await memberStore(deps.db).seatsUsed(target.id);
  const created = answers.filter((answer) => answer.status === 201).length;
  report({
    name: `${creates} SCIM creates, 10 clients, 2 instances`,
    ratio: percentile(answers.map((answer) => answer.ms), 95),
    wanted: "p95 ms",
    ok: created === creates && seatsUsed === creates + 1,
    detail: `p50 ${percentile(answers.map((answer) => answer.ms), 50).toFixed(0)} ms; answers ${tally(answers.map((answer) => answer.status))}; seats used ${seatsUsed} (the owner's and ${creates})`,
  });
  await reportLimits("SCIM creates over 2 instances", servers, since);
}

/** 10,000 members waiting (seeded), the quantity raised: the balancer seats them all while SCIM PATCHes go on. */
async function seatRaise(deps: Deps, servers: BenchServer[]) {
  const waiting = quick ? 2_000 : 10_000;
  const target = await scimBusiness(deps, "bench-raise", 1);
  await balanceSeats(deps, target.id);
  const store = memberStore(deps.db);
  const base = Date.now() - waiting * 1000;
  for (let start = 0; start < waiting; start += 100) {
    await deps.db.runTransaction(async (tx) => {
      for (let index = start; index < Math.min(waiting, start + 100); index += 1) {
        const at = new Date(base + index * 1000);
        const member: MemberRecord = { uid: `waiting-${String(index).padStart(6, "0")}`, role: "member", joinedAt: at, seat: false, seatAssignedAt: null, seatShard: null, waitingSince: at, source: "scim", suspended: false, managed: false, scim: { userName: `w${index}@${target.domain}`, externalId: null, displayName: null, name: {}, emails: [], created: at, lastModified: at }, groups: [] };
        store.put(tx, target.id, null, member);
      }
    });
  }
  // Members who want no seat (outside the seat groups, say): the PATCHes sent during the raise are theirs.
  await deps.db.runTransaction(async (tx) => {
    for (let index = 0; index < 50; index += 1) {
      const at = new Date(base - 1000);
      store.put(tx, target.id, null, { uid: `other-${index}`, role: "member", joinedAt: at, seat: false, seatAssignedAt: null, seatShard: null, waitingSince: null, source: "scim", suspended: false, managed: false, scim: { userName: `o${index}@${target.domain}`, externalId: null, displayName: null, name: {}, emails: [], created: at, lastModified: at }, groups: [] });
    }
  });
  const since = await startLimits(servers);
  const started = performance.now();
  await setSeats(deps, target.id, waiting + 1);
  // The deployed trigger's work (seatBalance), run from here while two instances take SCIM PATCHes.
  let balancing = true;
  const balanced = balanceSeats(deps, target.id).finally(() => (balancing = false));
  const patches: { status: number; ms: number }[] = [];
  for (let index = 0; balancing; index += 1) {
    patches.push(await scim(servers[index % 2], target.token, "PATCH", `/Users/other-${index % 50}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "displayName", value: `Renamed ${index}` }] }));
  }
  const moved = await balanced;
  const seconds = (performance.now() - started) / 1000;
  const seatsUsed = await store.seatsUsed(target.id);
  report({
    name: `seat raise, ${waiting.toLocaleString("en")} waiting`,
    ratio: seconds,
    wanted: "≤ 60 s",
    ok: seconds <= 60 && seatsUsed === waiting + 1 && patches.every((patch) => patch.status === 200) && percentile(patches.map((patch) => patch.ms), 95) < 2_000,
    detail: `${moved.seated.toLocaleString("en")} seated, ${seatsUsed.toLocaleString("en")} seats used; meanwhile ${patches.length} SCIM PATCHes, p95 ${percentile(patches.map((patch) => patch.ms), 95).toFixed(0)} ms (${tally(patches.map((patch) => patch.status))})`,
  });
  // Beside the balancer's own writes (this process): what the two instances wrote meanwhile.
  await reportLimits("SCIM PATCHes during the raise", servers, since);
}

/** 200 users confirm one module at once, half on each instance; then 100 update checks a second from their devices. */
async function devices(deps: Deps, servers: BenchServer[], moduleId: string) {
  const users = await Promise.all(
    Array.from({ length: 200 }, async (_, index) => {
      const email = `device-${index}@example.test`;
      await deps.auth.createUser({ email, password: "bench-device-password" });
      return (await deps.identity.signInWithPassword(email, "bench-device-password")).idToken;
    }),
  );
  let since = await startLimits(servers);
  const confirms = await Promise.all(
    users.map(async (token, index) => {
      const started = performance.now();
      const response = await fetch(`${servers[index % 2].origin}/api/v1/modules/confirm`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ moduleId, version: "1.0.0", deviceId: `pc-${index}`, platform: "win32" }) });
      await response.arrayBuffer();
      return { status: response.status, ms: performance.now() - started };
    }),
  );
  report({
    name: "200 concurrent confirms of one module, 2 instances",
    ratio: percentile(confirms.map((confirm) => confirm.ms), 95),
    wanted: "p95 ms",
    ok: confirms.every((confirm) => confirm.status === 200),
    detail: `p50 ${percentile(confirms.map((confirm) => confirm.ms), 50).toFixed(0)} ms; answers ${tally(confirms.map((confirm) => confirm.status))}`,
  });
  await reportLimits("200 confirms", servers, since);

  const seconds = quick ? 10 : 60;
  since = await startLimits(servers);
  let turn = 0;
  const checks = await Promise.all(
    servers.map((server) =>
      autocannon({
        url: `${server.origin}/api/v1/modules/updates`,
        method: "POST",
        // Enough connections that the rate is the limit, not the answers' latency.
        connections: 40,
        overallRate: 50,
        duration: seconds,
        requests: [
          {
            setupRequest: (request: autocannon.Request) => {
              const index = turn++ % users.length;
              return { ...request, headers: { ...request.headers, authorization: `Bearer ${users[index]}`, "content-type": "application/json" }, body: JSON.stringify({ appVersion: "1.0.0", installed: [{ moduleId, version: "1.0.0" }], deviceId: `pc-${index}`, platform: "win32" }) };
            },
          },
        ],
      }),
    ),
  );
  const answered = checks.reduce((sum, result) => sum + result["2xx"], 0);
  const failed = checks.reduce((sum, result) => sum + result.non2xx + result.errors, 0);
  report({
    name: `update checks, 100/s for ${seconds} s, 2 instances`,
    ratio: Math.max(...checks.map((result) => result.latency.p97_5)),
    wanted: "p97.5 ms",
    ok: failed === 0,
    detail: `${answered} answered, ${failed} failed; ${users.length} devices`,
  });
  await reportLimits("update checks", servers, since);
}

export async function limitsRows(deps: Deps, servers: BenchServer[], moduleId: string): Promise<void> {
  console.log("\nAt Firestore's limits, two instances (§25, §28):");
  await scimClients(deps, servers);
  await seatRaise(deps, servers);
  await devices(deps, servers, moduleId);
}
