import type { MemberRecord } from "../functions/src/accounts/business-records";
import { memberStore } from "../functions/src/accounts/member-store";
import { addMember, createBusiness } from "../functions/src/businesses/operators";
import { systemActor } from "../functions/src/core/audit-log";
import type { Deps } from "../functions/src/deps";
import { verifyDomainForBusiness } from "../functions/src/domains/service";
import { sweepDirectoryJobs } from "../functions/src/scim/directory-jobs";
import { createScimToken } from "../functions/src/scim/tokens";
import { percentile, reportLimits, startLimits, type BenchServer } from "./bench-harness";

/**
 * §25's rows: a business of 100,000 members against one of 10, on the same API. The large one is
 * seeded through the member store every service writes with (its transactions, its seat counts and
 * SCIM keys), a few hundred members a transaction, and the seeding's time is printed. Then: SCIM
 * create and PATCH latency (p50, p95) in each business (ratio ≤ 1.5), a member's `GET /users/me`
 * in each (ratio ≤ 1.1), paging through every SCIM user with count=200 (each seen once), and
 * provisioning 10,000 users with 10 concurrent SCIM clients (each answered 201).
 */

export interface BusinessRow {
  name: string;
  ratio: number;
  wanted: string;
  ok: boolean | null;
  detail: string;
}

const LARGE = 100_000;
const SMALL = 10;
/** Members written per seeding transaction (each also writes a seat-count shard and a SCIM key). */
const SEED_PER_TRANSACTION = 150;
const SEED_CONCURRENCY = 8;

interface Scale {
  members: number;
  samples: number;
  provision: number;
}

export const BUSINESS_SCALE = { full: { members: LARGE, samples: 60, provision: 10_000 }, quick: { members: 10_000, samples: 20, provision: 1_000 } } satisfies Record<string, Scale>;

const timed = async <T>(work: () => Promise<T>) => {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
};

/** A business with an owner (who calls /users/me), a verified domain, a SCIM token, and `members` SCIM Users seeded in batches. */
async function business(deps: Deps, apiBase: string, id: string, members: number) {
  const domain = `${id}.example.test`;
  await createBusiness(deps, { id, name: id });
  const email = `owner@${domain}`;
  const owner = await deps.auth.createUser({ email, password: "bench-owner-password", emailVerified: true });
  await addMember(deps, { id, user: owner.uid, role: "owner" });
  await verifyDomainForBusiness(deps, { id, domain });
  const { token } = await createScimToken(deps, { uid: owner.uid, signInProvider: "password" }, systemActor("bench"), id, "bench");
  const store = memberStore(deps.db);
  const started = performance.now();
  const base = Date.now() - members * 1000;
  const batches = Array.from({ length: Math.ceil(members / SEED_PER_TRANSACTION) }, (_, index) => index);
  for (let next = 0; next < batches.length; next += SEED_CONCURRENCY) {
    await Promise.all(
      batches.slice(next, next + SEED_CONCURRENCY).map((batch) =>
        deps.db.runTransaction(async (tx) => {
          for (let index = batch * SEED_PER_TRANSACTION; index < Math.min(members, (batch + 1) * SEED_PER_TRANSACTION); index += 1) {
            const at = new Date(base + index * 1000);
            const member: MemberRecord = {
              uid: `seeded-${String(index).padStart(6, "0")}`,
              role: "member",
              joinedAt: at,
              seat: true,
              seatAssignedAt: at,
              seatShard: null,
              waitingSince: null,
              source: "scim",
              suspended: false,
              managed: false,
              scim: { userName: `user${index}@${domain}`, externalId: `ext-${index}`, displayName: `User ${index}`, name: {}, emails: [], created: at, lastModified: at },
              groups: [],
            };
            store.put(tx, id, null, member);
          }
        }),
      ),
    );
  }
  const seededMs = performance.now() - started;
  const idToken = (await deps.identity.signInWithPassword(email, "bench-owner-password")).idToken;
  return { id, domain, scim: `${apiBase}/scim/v2`, token, idToken, seededMs };
}

type Business = Awaited<ReturnType<typeof business>>;

const scimCall = (target: Business, method: string, path: string, body?: unknown) =>
  fetch(`${target.scim}${path}`, { method, headers: { authorization: `Bearer ${target.token}`, "content-type": "application/scim+json" }, body: body === undefined ? undefined : JSON.stringify(body) });

const user = (email: string) => ({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, name: { givenName: "Bench", familyName: "User" }, emails: [{ value: email, type: "work", primary: true }], active: true });

/** Latencies of `samples` calls, the two businesses taking turns (each turn `roundMs` long at least: the pace of a client that changes no document faster than Firestore sustains). */
async function latencies(targets: [Business, Business], samples: number, call: (target: Business, index: number) => Promise<Response>, roundMs = 0) {
  const times: [number[], number[]] = [[], []];
  let failed = 0;
  for (let index = 0; index < samples; index += 1) {
    const round = Date.now();
    for (const side of [0, 1] as const) {
      const { result, ms } = await timed(() => call(targets[side], index));
      if (!result.ok) failed += 1;
      await result.arrayBuffer();
      times[side].push(ms);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, round + roundMs - Date.now())));
  }
  return { small: times[0].sort((a, b) => a - b), large: times[1].sort((a, b) => a - b), failed };
}

export async function businessesAtScale(deps: Deps, servers: BenchServer[], report: (row: BusinessRow) => void, scale: Scale) {
  const apiBase = `${servers[0].origin}/api/v1`;
  const seededSmall = await business(deps, apiBase, "bench-small", SMALL);
  const seededLarge = await business(deps, apiBase, "bench-large", scale.members);
  console.log(`  seeded ${scale.members.toLocaleString("en")} members in ${(seededLarge.seededMs / 1000).toFixed(1)} s (${SEED_PER_TRANSACTION} a transaction, ${SEED_CONCURRENCY} at once)`);
  const pair: [Business, Business] = [seededSmall, seededLarge];

  const rowOf = (name: string, measured: { small: number[]; large: number[]; failed: number }, wanted: number) => {
    const ratio = percentile(measured.large, 95) / percentile(measured.small, 95);
    report({
      name,
      ratio,
      wanted: `≤ ${wanted}`,
      ok: ratio <= wanted && measured.failed === 0,
      detail: `p50 ${percentile(measured.large, 50).toFixed(0)} vs ${percentile(measured.small, 50).toFixed(0)} ms, p95 ${percentile(measured.large, 95).toFixed(0)} vs ${percentile(measured.small, 95).toFixed(0)} ms at ${scale.members.toLocaleString("en")} vs ${SMALL} members${measured.failed ? `, ${measured.failed} failed` : ""}`,
    });
  };

  let since = await startLimits(servers);
  const created = await latencies(pair, scale.samples, (target, index) => scimCall(target, "POST", "/Users", user(`new${index}@${target.domain}`)));
  rowOf("SCIM create, p95 at scale / at 10 members", created, 1.5);
  await reportLimits("SCIM creates", servers, since);
  since = await startLimits(servers);
  // PATCHes are quick: more of them, so that the p95 is not one slow answer. The ten members of
  // the small business take turns, a turn at least 110 ms, so that no member is renamed more than
  // about once a second (an identity provider changes a person rarely; renaming ten people six
  // times a second measured the client's own hot spot).
  const patched = await latencies(
    pair,
    scale.samples * 3,
    (target, index) => scimCall(target, "PATCH", `/Users/seeded-${String(index % SMALL).padStart(6, "0")}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "displayName", value: `Renamed ${index}` }] }),
    110,
  );
  rowOf("SCIM PATCH, p95 at scale / at 10 members", patched, 1.5);
  await reportLimits("SCIM PATCHes", servers, since);

  // In the large business, a group of 10 members and one of 1,000; then members not in either
  // added to one and removed again, one a PATCH, as Okta and Entra send them, the two groups
  // taking turns.
  const seededUid = (index: number) => `seeded-${String(index).padStart(6, "0")}`;
  const groupOf = async (size: number, from: number) => {
    const uids = Array.from({ length: size }, (_, index) => seededUid(from + index));
    const created = (await (await scimCall(seededLarge, "POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: `Bench ${size}`, members: uids.slice(0, 150).map((value) => ({ value })) })).json()) as { id: string };
    for (let start = 150; start < size; start += 150) {
      await scimCall(seededLarge, "PATCH", `/Groups/${created.id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "add", path: "members", value: uids.slice(start, start + 150).map((value) => ({ value })) }] });
    }
    return created.id;
  };
  const groups = [await groupOf(SMALL, 0), await groupOf(1_000, SMALL)];
  since = await startLimits(servers);
  // Each group has a hundred members of its own in rotation, each added in one turn and removed in the next.
  const moving = (side: number, index: number) => seededUid(2_000 + side * 100 + ((index >> 1) % 100));
  const memberMoves = await latencies(pair, scale.samples * 3, (target, index) => {
    const side = target === seededSmall ? 0 : 1;
    return scimCall(seededLarge, "PATCH", `/Groups/${groups[side]}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [index % 2 === 0 ? { op: "add", path: "members", value: [{ value: moving(side, index) }] } : { op: "remove", path: `members[value eq "${moving(side, index)}"]` }],
    });
  });
  rowOf("Group PATCH of one member, 1,000-member group / 10", memberMoves, 1.5);
  await reportLimits("group PATCHes", servers, since);
  const deleting = await timed(async () => {
    const answer = await scimCall(seededLarge, "DELETE", `/Groups/${groups[1]}`);
    return answer.status;
  });
  // The deployed trigger's work, run from here: the group taken off its 1,000 members.
  const removing = await timed(() => sweepDirectoryJobs(deps));
  report({
    name: "DELETE of a 1,000-member group",
    ratio: deleting.ms,
    wanted: "ms",
    ok: deleting.result === 204,
    detail: `answered ${deleting.result} in ${deleting.ms.toFixed(0)} ms; its members left it in the background in ${(removing.ms / 1000).toFixed(1)} s`,
  });
  since = await startLimits(servers);
  const me = await latencies(pair, scale.samples * 3, (target) => fetch(`${apiBase}/users/me`, { headers: { authorization: `Bearer ${target.idToken}` } }));
  rowOf("GET /users/me of a member, p95 at scale / at 10", me, 1.1);
  await reportLimits("/users/me", servers, since);

  // Every SCIM user once, 200 a page, as an identity provider reads them.
  const seen = new Set<string>();
  let pages = 0;
  const paging = await timed(async () => {
    for (let startIndex = 1; ; startIndex += 200) {
      const page = (await (await scimCall(seededLarge, "GET", `/Users?startIndex=${startIndex}&count=200&attributes=userName`)).json()) as { Resources: { id: string }[]; totalResults: number };
      pages += 1;
      for (const resource of page.Resources) seen.add(resource.id);
      if (page.Resources.length < 200) return page.totalResults;
    }
  });
  report({
    name: `page through every SCIM user (count=200)`,
    ratio: paging.ms / 1000,
    wanted: "s",
    ok: seen.size === paging.result,
    detail: `${pages} pages, ${seen.size.toLocaleString("en")} distinct of ${paging.result.toLocaleString("en")} (totalResults), ${(paging.ms / pages).toFixed(0)} ms a page`,
  });

  // 10 clients, each provisioning its share in turn.
  since = await startLimits(servers);
  const statuses = new Map<number, number>();
  const provisioning = await timed(() =>
    Promise.all(
      Array.from({ length: 10 }, async (_, client) => {
        for (let index = client; index < scale.provision; index += 10) {
          const response = await scimCall(seededLarge, "POST", "/Users", user(`bulk${index}@${seededLarge.domain}`));
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    ),
  );
  report({
    name: `provision ${scale.provision.toLocaleString("en")} users, 10 SCIM clients`,
    ratio: provisioning.ms / 1000,
    wanted: "s",
    ok: statuses.get(201) === scale.provision,
    detail: `${((scale.provision / provisioning.ms) * 1000).toFixed(0)} users/s; answers ${[...statuses].map(([status, count]) => `${count}× ${status}`).join(", ")}`,
  });
  await reportLimits(`provisioning ${scale.provision.toLocaleString("en")} users`, servers, since);
  const largest = Buffer.byteLength(JSON.stringify((await deps.db.doc(`businesses/${seededLarge.id}`).get()).data()));
  console.log(`  the business's own document: ${largest.toLocaleString("en")} bytes after ${(scale.members + scale.provision).toLocaleString("en")} members`);
}
