import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, signedInApi, type Schemas, type SignedInApi } from "../api";
import { useTitle } from "../ui/use-title";
import { useSignedInUser } from "../ui/use-signed-in-user";
import { signOutUser } from "../auth";
import { formatDate } from "../format";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { SignIn } from "../ui/SignIn";
import { useAction } from "../ui/use-action";
import { useConfirm } from "../ui/confirm";
import { CopyButton } from "../ui/CopyButton";
import { VerifyEmail } from "./VerifyEmail";
import { WebhooksPanel } from "../webhooks/WebhooksPanel";
import { EnterprisePanel } from "./EnterprisePanel";
import { businessWebhooks } from "../webhooks/webhook-api";

/** `/account`: any signed-in user's businesses; owners and admins run their team and billing here (§17). */
export function AccountPage() {
  useTitle("Your account");
  const user = useSignedInUser();
  if (user instanceof Error) {
    return (
      <section class="page">
        <h1>Your account</h1>
        <ErrorMessage error={user} />
      </section>
    );
  }
  if (user === undefined) return <Loading what="your account" />;
  if (!user) return <SignIn title="Your account" intro="Sign in to see your businesses, their seats and members." allowCreate />;
  const next = returnPath();
  if (next) {
    // Signed in from another page (a module's "Sign in to buy"): back to it.
    location.replace(next);
    return <Loading what="the page you came from" />;
  }
  return <Account user={user} />;
}

/** Where to go back to after signing in (`?next=`): a path of this site only, never another origin. */
function returnPath(): string | null {
  const next = new URLSearchParams(location.search).get("next");
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : null;
}

function Account({ user }: { user: User }) {
  const api = useMemo(() => signedInApi(() => user.getIdToken()), [user]);
  const [profile, setProfile] = useState<Schemas["UserProfile"] | null>(null);
  const { error, status, run, setError } = useAction();
  const params = new URLSearchParams(location.search);
  const [chosen, setChosen] = useState<string | null>(params.get("business"));
  const reload = async () => setProfile(await dataOf(api.GET("/users/me")));
  const choose = (businessId: string) => {
    setChosen(businessId);
    const url = new URL(location.href);
    url.searchParams.set("business", businessId);
    history.replaceState(null, "", url);
  };
  useEffect(() => {
    reload().catch(setError);
  }, [api]);

  const create = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(formElement).get("name") ?? "");
    return run(async () => {
      await dataOf(api.POST("/businesses", { body: { name } }));
      formElement.reset();
      await reload();
      return `Created ${name}; you own it and hold its first seat.`;
    });
  };

  return (
    <section class="page portal">
      <div class="portal-header">
        <h1>Your account</h1>
        <p class="signed-in">
          Signed in as <strong>{user.email}</strong>{" "}
          <button type="button" class="link-button" onClick={() => void signOutUser()}>
            Sign out
          </button>
        </p>
      </div>
      {params.get("checkout") === "success" && <p class="message status">Payment received: the seats appear here as soon as the billing provider confirms them.</p>}
      {params.get("checkout") === "canceled" && <p class="message status">Checkout canceled: nothing was bought.</p>}
      {!user.emailVerified && <VerifyEmail user={user} />}
      <ErrorMessage error={error} />
      {!profile && !error && <Loading what="your businesses" />}
      {profile && profile.businesses.length === 0 && <p>You are not a member of any business yet.</p>}
      {profile && profile.businesses.length > 1 && (
        <div class="field inline-field business-switcher">
          <label for="business-switcher">Business</label>
          <select id="business-switcher" value={shownBusiness(profile, chosen)} onChange={(event) => choose(event.currentTarget.value)}>
            {profile.businesses.map((business) => (
              <option value={business.id} key={business.id}>
                {business.name} ({business.role})
              </option>
            ))}
          </select>
        </div>
      )}
      {profile && profile.businesses.length > 0 && <BusinessPanel key={shownBusiness(profile, chosen)} api={api} uid={user.uid} businessId={shownBusiness(profile, chosen)} onChange={reload} />}
      <section aria-labelledby="create-heading" class="panel">
        <h2 id="create-heading">Create a business</h2>
        <p class="muted">You become its owner and hold its first seat; invite your team and buy seats from here.</p>
        <form class="grid-form" onSubmit={create}>
          <div class="field">
            <label for="business-name">Name</label>
            <input id="business-name" name="name" required maxLength={200} placeholder="Acme Corp" />
          </div>
          <button type="submit">Create</button>
        </form>
        <StatusMessage>{status}</StatusMessage>
      </section>
    </section>
  );
}

/** The business the page shows: the one chosen (`?business=`) while the user is in it, else their first. */
const shownBusiness = (profile: Schemas["UserProfile"], chosen: string | null) =>
  profile.businesses.find((business) => business.id === chosen)?.id ?? profile.businesses[0].id;

function BusinessPanel({ api, uid, businessId, onChange }: { api: SignedInApi; uid: string; businessId: string; onChange: () => Promise<void> }) {
  const [business, setBusiness] = useState<Schemas["Business"] | null>(null);
  const [members, setMembers] = useState<Schemas["Member"][] | null>(null);
  const [invitations, setInvitations] = useState<Schemas["PendingInvitation"][] | null>(null);
  const [invited, setInvited] = useState<Schemas["CreatedInvitation"] | null>(null);
  const { error, status, run, setError } = useAction();
  const { confirm, dialog } = useConfirm();
  const path = { businessId };
  const webhooks = useMemo(() => businessWebhooks(api, businessId), [api, businessId]);

  const reload = async () => {
    const current = await dataOf(api.GET("/businesses/{businessId}", { params: { path } }));
    setBusiness(current);
    if (current.role === "member") return;
    const [memberPage, pending] = await Promise.all([
      dataOf(api.GET("/businesses/{businessId}/members", { params: { path, query: { limit: 100 } } })),
      dataOf(api.GET("/businesses/{businessId}/invitations", { params: { path } })),
    ]);
    setMembers(memberPage.items);
    setInvitations(pending.items);
  };
  useEffect(() => {
    reload().catch(setError);
  }, [api, businessId]);

  if (!business) {
    return (
      <section class="panel">
        <ErrorMessage error={error} />
        {!error && <Loading what="the business" />}
      </section>
    );
  }
  const { subscription } = business;
  const manages = business.role !== "member";
  const owns = business.role === "owner";
  const headingId = `business-${businessId}`;

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
  const leave = async () => {
    if (!(await confirm({ title: `Leave ${business.name}?`, detail: `You lose your ${business.seat ? "seat and what it grants" : "membership"}; only an owner or admin can invite you back.`, action: "Leave" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/businesses/{businessId}/members/{uid}", { params: { path: { businessId, uid } } }));
      await onChange();
      return `You left ${business.name}.`;
    });
  };
  const invite = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    return run(async () => {
      const invitation = await dataOf(
        api.POST("/businesses/{businessId}/invitations", {
          params: { path },
          body: { email: String(form.get("email") ?? ""), role: form.get("role") === "admin" ? "admin" : "member", seat: form.get("seat") === "on" },
        }),
      );
      setInvited(invitation);
      formElement.reset();
      await reload();
      return `Invited ${invitation.email}; the link was emailed.`;
    });
  };
  /** Invites the same email again: a new token (tokens are kept hashed), emailed; the earlier link stops working. */
  const reissue = (invitation: Schemas["PendingInvitation"]) =>
    dataOf(api.POST("/businesses/{businessId}/invitations", { params: { path }, body: { email: invitation.email, role: invitation.role === "admin" ? "admin" : "member", seat: invitation.seat } }));
  const resend = (invitation: Schemas["PendingInvitation"]) =>
    run(async () => {
      const sent = await reissue(invitation);
      await reload();
      return `Sent ${sent.email} a new link, valid until ${formatDate(sent.expiresAt)}; the earlier one no longer works.`;
    });
  const copyLink = (invitation: Schemas["PendingInvitation"]) =>
    run(async () => {
      const issued = await reissue(invitation);
      setInvited(issued);
      await reload();
      const copied = issued.acceptUrl ? await navigator.clipboard.writeText(issued.acceptUrl).then(() => true, () => false) : false;
      return copied
        ? `Copied a new link for ${issued.email} (also emailed to them); the earlier one no longer works.`
        : `A new link for ${issued.email} is below (also emailed to them); the earlier one no longer works.`;
    });
  const revoke = async (invitation: Schemas["PendingInvitation"]) => {
    if (!(await confirm({ title: `Revoke the invitation of ${invitation.email}?`, detail: "Its link stops working; you can invite them again later.", action: "Revoke" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/businesses/{businessId}/invitations/{invitationId}", { params: { path: { businessId, invitationId: invitation.id } } }));
      await reload();
      return `Revoked the invitation of ${invitation.email}.`;
    });
  };
  const takeSeat = async (member: Schemas["Member"], who: string) => {
    if (!(await confirm({ title: `Take the seat back from ${who}?`, detail: `${who} stays a member but loses what the seat grants until given one again.`, action: "Take the seat back" }))) return;
    await change(member, { seat: false }, `Took ${who}'s seat back.`);
  };
  const buySeats = (event: Event) => {
    event.preventDefault();
    const seats = Number(new FormData(event.currentTarget as HTMLFormElement).get("seats"));
    return run(async () => {
      location.assign((await dataOf(api.POST("/businesses/{businessId}/billing/checkout", { params: { path }, body: { plan: "team", seats } }))).url);
      return "Opening the checkout…";
    });
  };
  const manageBilling = () =>
    run(async () => {
      location.assign((await dataOf(api.POST("/businesses/{businessId}/billing/portal", { params: { path } }))).url);
      return "Opening the billing portal…";
    });
  const live = ["active", "trialing", "past_due"].includes(subscription.status);
  // The sole owner may not leave, be removed or be demoted: the service refuses it (last_owner), so the page does not offer it.
  const owners = members?.filter((member) => member.role === "owner").length ?? (owns ? 1 : 2);
  const soleOwner = (member: { role: string }) => member.role === "owner" && owners <= 1;

  return (
    <section aria-labelledby={headingId} class="panel">
      <h2 id={headingId}>{business.name}</h2>
      <p>
        You are {business.role === "admin" ? "an admin" : `the ${business.role === "owner" ? "owner" : "member"}`} {business.seat ? "with a seat" : "without a seat"}.{" "}
        {subscription.status === "none" ? (
          "No subscription yet."
        ) : (
          <>
            Plan <strong>{subscription.plan}</strong>, <span class={`badge ${live ? "ok" : "warn"}`}>{subscription.status.replace("_", " ")}</span>, seats used{" "}
            <strong>
              {subscription.seatsUsed} of {subscription.seats ?? "any number"}
            </strong>
            {subscription.currentPeriodEnd && (live ? (subscription.cancelAtPeriodEnd ? <>, ends {formatDate(subscription.currentPeriodEnd)}</> : <>, renews {formatDate(subscription.currentPeriodEnd)}</>) : <>, ended on {formatDate(subscription.currentPeriodEnd)}</>)}.
          </>
        )}
      </p>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {owns && (
        <div class="button-row">
          {!live && (
            <form class="inline-form" onSubmit={buySeats}>
              <label for={`seats-${businessId}`}>Seats</label>
              <input id={`seats-${businessId}`} name="seats" type="number" min={Math.max(1, subscription.seatsUsed)} max={10000} defaultValue={String(Math.max(1, subscription.seatsUsed))} required />
              <button type="submit">Buy seats</button>
            </form>
          )}
          {business.billingAccount ? (
            <button type="button" class="secondary" onClick={() => void manageBilling()}>
              {live ? "Change seats" : "Billing history"}
            </button>
          ) : (
            subscription.status !== "none" && <span class="muted">This plan is managed by the marketplace's operators: ask them to change it.</span>
          )}
        </div>
      )}
      {manages && members && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={`Members of ${business.name}`}>
          <table class="stacked">
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
      )}
      {manages && (
        <>
          <h3>Invite someone</h3>
          <form class="grid-form" onSubmit={invite}>
            <div class="field">
              <label for={`invite-email-${businessId}`}>Email</label>
              <input id={`invite-email-${businessId}`} name="email" type="email" required maxLength={254} />
            </div>
            <div class="field">
              <label for={`invite-role-${businessId}`}>Role</label>
              <select id={`invite-role-${businessId}`} name="role">
                <option value="member">member</option>
                <option value="admin">admin</option>
              </select>
            </div>
            <div class="field checkbox">
              <input id={`invite-seat-${businessId}`} name="seat" type="checkbox" defaultChecked />
              <label for={`invite-seat-${businessId}`}>With a seat</label>
            </div>
            <button type="submit">Invite</button>
          </form>
          {invited && (
            <p class="muted">
              Link for {invited.email} (also emailed; it works once, until {formatDate(invited.expiresAt)}): <code class="wrap">{invited.acceptUrl}</code>{" "}
              {invited.acceptUrl && <CopyButton text={invited.acceptUrl} label={`the invitation link for ${invited.email}`} />}
            </p>
          )}
          <h3>Pending invitations</h3>
          {invitations && invitations.length === 0 && <p>None.</p>}
          {invitations && invitations.length > 0 && (
            <ul class="plain-list invitations">
              {invitations.map((invitation) => (
                <li key={invitation.id}>
                  <strong>{invitation.email}</strong> as {invitation.role}
                  {invitation.seat ? " with a seat" : ""}
                  <div class="muted">
                    Invited {invitation.invitedBy ? `by ${invitation.invitedBy} ` : ""}on {formatDate(invitation.createdAt)}; the link works until {formatDate(invitation.expiresAt)}.
                  </div>
                  <div class="button-row">
                    <button type="button" class="secondary" onClick={() => void resend(invitation)}>
                      Resend<span class="visually-hidden"> the invitation of {invitation.email}</span>
                    </button>
                    <button type="button" class="secondary" onClick={() => void copyLink(invitation)}>
                      Copy link<span class="visually-hidden"> for {invitation.email}</span>
                    </button>
                    <button type="button" class="danger" onClick={() => void revoke(invitation)}>
                      Revoke<span class="visually-hidden"> the invitation of {invitation.email}</span>
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      {manages && <WebhooksPanel webhooks={webhooks} headingId={`webhooks-${businessId}`} nested />}
      {owns && <EnterprisePanel api={api} businessId={businessId} businessName={business.name} />}
      <p>
        {owns && owners <= 1 ? (
          <span class="muted">You are its only owner: to leave, make someone else owner first.</span>
        ) : (
          <button type="button" class="link-button" onClick={() => void leave()}>
            Leave {business.name}
          </button>
        )}
      </p>
      {dialog}
    </section>
  );
}
