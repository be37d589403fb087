import { dataOf, type Schemas } from "../api";
import { formatDate } from "../format";
import type { PanelActions } from "./panel-actions";

/** A business's members for its owners and admins: roles, seats, removal (§17); the sole owner is never offered what the service refuses (last_owner). */
export function MembersTable({ business, members, uid, actions }: { business: Schemas["Business"]; members: Schemas["Member"][]; uid: string; actions: PanelActions }) {
  const { api, businessId, run, confirm, reload } = actions;
  const owns = business.role === "owner";
  const live = ["active", "trialing", "past_due"].includes(business.subscription.status);
  const owners = members.filter((member) => member.role === "owner").length;
  const soleOwner = (member: { role: string }) => member.role === "owner" && owners <= 1;
  const change = (member: Schemas["Member"], body: { role?: "owner" | "admin" | "member"; seat?: boolean }, said: string) =>
    run(async () => {
      await dataOf(api.PATCH("/businesses/{businessId}/members/{uid}", { params: { path: { businessId, uid: member.uid } }, body }));
      await reload();
      return said;
    });
  const remove = async (member: Schemas["Member"], who: string) => {
    if (!(await confirm({ title: `Remove ${who}?`, detail: `${who} leaves ${business.name}${member.seat ? ", gives back their seat" : ""} and loses what the business's plan and purchases grant them.`, action: "Remove" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/businesses/{businessId}/members/{uid}", { params: { path: { businessId, uid: member.uid } } }));
      await reload();
      return `Removed ${member.email ?? member.uid}.`;
    });
  };
  const takeSeat = async (member: Schemas["Member"], who: string) => {
    if (!(await confirm({ title: `Take the seat back from ${who}?`, detail: `${who} stays a member but loses what the seat grants until given one again.`, action: "Take the seat back" }))) return;
    await change(member, { seat: false }, `Took ${who}'s seat back.`);
  };

  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={`Members of ${business.name}`}>
      <table class="stacked members">
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Seat</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {members.map((member) => {
            const who = member.displayName ?? member.email ?? member.uid;
            return (
              <tr key={member.uid}>
                <th data-label="Member" scope="row">
                  {who}
                  {member.email && member.displayName && <div class="muted">{member.email}</div>}
                  {(member.source === "scim" || member.scimManaged) && <span class="badge">SCIM</span>}
                  {member.source === "sso" && <span class="badge">Single sign-on</span>}
                  {member.suspended && <span class="badge warn">Suspended</span>}
                </th>
                <td data-label="Role">
                  <label class="visually-hidden" for={`role-${member.uid}`}>
                    Role of {who}
                  </label>
                  <select
                    id={`role-${member.uid}`}
                    value={member.role}
                    disabled={soleOwner(member)}
                    aria-describedby={soleOwner(member) ? `role-reason-${member.uid}` : undefined}
                    onChange={(event) => void change(member, { role: event.currentTarget.value as "owner" | "admin" | "member" }, `${who} is now ${event.currentTarget.value}.`)}
                  >
                    <option value="member">member</option>
                    <option value="admin">admin</option>
                    {(owns || member.role === "owner") && <option value="owner">owner</option>}
                  </select>
                  {soleOwner(member) && (
                    <span class="reason" id={`role-reason-${member.uid}`}>
                      The only owner: make someone else owner first.
                    </span>
                  )}
                </td>
                <td data-label="Seat">
                  {member.seat ? (live && !member.entitled ? "Seat (waiting: over the paid quantity)" : "Seat") : "No seat"}
                  {member.seatAssignedAt && <div class="muted">since {formatDate(member.seatAssignedAt)}</div>}
                </td>
                <td data-label="Actions" class="actions">
                  {member.suspended ? (
                    <span class="muted">Suspended by your identity provider: restore them there.</span>
                  ) : member.seat ? (
                    <button type="button" class="secondary" onClick={() => void takeSeat(member, who)}>
                      Take the seat back<span class="visually-hidden"> from {who}</span>
                    </button>
                  ) : (
                    <button type="button" class="secondary" onClick={() => void change(member, { seat: true }, `Gave ${who} a seat.`)}>
                      Give a seat<span class="visually-hidden"> to {who}</span>
                    </button>
                  )}{" "}
                  {!soleOwner(member) && member.uid !== uid && (
                    <button type="button" class="danger" onClick={() => void remove(member, who)}>
                      Remove<span class="visually-hidden"> {who}</span>
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
