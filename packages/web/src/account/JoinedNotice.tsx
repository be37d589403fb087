import { useEffect, useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas } from "../api";

/**
 * After accepting an invitation (§24): "You joined <business>", and what membership there unlocks:
 * the entitlements its subscription grants the person now, and the listed modules that need them.
 */
export function JoinedNotice({ profile, businessId }: { profile: Schemas["UserProfile"]; businessId: string }) {
  const business = profile.businesses.find((candidate) => candidate.id === businessId);
  const keys = [...new Set(profile.entitlements.filter((grant) => grant.businessId === businessId && grant.source === "subscription").map((grant) => grant.key))];
  const [modules, setModules] = useState<{ items: { id: string; name: string; entitlement: string | null }[]; more: boolean } | null>(null);
  useEffect(() => {
    if (keys.length === 0) return;
    // The first page of the listing, filtered here: enough to show what opens, with a link to the rest.
    dataOf(publicApi.GET("/modules", { params: { query: { limit: 100 } } })).then(
      (page) => setModules({ items: page.items.filter((module) => module.entitlement !== null && keys.includes(module.entitlement)), more: page.nextCursor !== null }),
      () => setModules({ items: [], more: true }),
    );
  }, [businessId, keys.join(",")]);
  if (!business) return null;
  return (
    <section class="message status joined" role="status" aria-labelledby="joined-heading">
      <h2 id="joined-heading">You joined {business.name}</h2>
      {!business.seat ? (
        <p>You are a member without a seat: an owner or admin can give you one, which brings what the business's plan grants.</p>
      ) : keys.length === 0 ? (
        <p>Your seat holds no entitlements yet: the business's plan grants none right now.</p>
      ) : (
        <>
          <p>
            Your seat unlocks {keys.length === 1 ? "the entitlement" : "the entitlements"} {keys.map((key, index) => (
              <span key={key}>
                {index > 0 && ", "}
                <code>{key}</code>
              </span>
            ))}
            .
          </p>
          {modules && modules.items.length > 0 && (
            <>
              <p>Modules it opens:</p>
              <ul class="plain-list">
                {modules.items.map((module) => (
                  <li key={module.id}>
                    <a href={`/modules/${encodeURIComponent(module.id)}`}>{module.name}</a> <span class="muted">({module.entitlement})</span>
                  </li>
                ))}
              </ul>
            </>
          )}
          {modules?.more && (
            <p>
              <a href="/">Browse every module</a>
            </p>
          )}
        </>
      )}
    </section>
  );
}
