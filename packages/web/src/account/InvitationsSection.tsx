import { useState } from "preact/hooks";
import { dataOf, type Schemas } from "../api";
import { formatDate } from "../format";
import { CopyButton } from "../ui/CopyButton";
import type { PanelActions } from "./panel-actions";

/** Inviting people to a business, and its pending invitations: resend, copy a new link, revoke (§17). */
export function InvitationsSection({ invitations, actions }: { invitations: Schemas["PendingInvitation"][] | null; actions: PanelActions }) {
  const { api, businessId, run, confirm, reload } = actions;
  const [invited, setInvited] = useState<Schemas["CreatedInvitation"] | null>(null);
  const path = { businessId };
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

  return (
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
  );
}
