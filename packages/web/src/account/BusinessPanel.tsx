import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { useConfirm } from "../ui/confirm";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { WebhooksPanel } from "../webhooks/WebhooksPanel";
import { businessWebhooks } from "../webhooks/webhook-api";
import { CompanyModulesSection } from "../policy/CompanyModulesSection";
import { EnterprisePanel } from "./EnterprisePanel";
import { InvitationsSection } from "./InvitationsSection";
import { MembersTable } from "./MembersTable";
import type { PanelActions } from "./panel-actions";
import { PlanSection } from "./PlanSection";

/**
 * One business on `/account` (§17): its plan and billing, its members and invitations (owners and
 * admins), its modules (install policy and private modules, §26), its webhooks and enterprise
 * settings, and leaving it. The sections share one action
 * runner, so one message line says what the last action came to.
 */
export function BusinessPanel({ api, uid, businessId, onChange }: { api: SignedInApi; uid: string; businessId: string; onChange: () => Promise<void> }) {
  const [business, setBusiness] = useState<Schemas["Business"] | null>(null);
  const [members, setMembers] = useState<Schemas["Member"][] | null>(null);
  const [invitations, setInvitations] = useState<Schemas["PendingInvitation"][] | null>(null);
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
  const manages = business.role !== "member";
  const owns = business.role === "owner";
  const headingId = `business-${businessId}`;
  const actions: PanelActions = { api, businessId, run, confirm, reload };
  // The sole owner may not leave: the service refuses it (last_owner), so the page does not offer it.
  const owners = members?.filter((member) => member.role === "owner").length ?? (owns ? 1 : 2);
  const leave = async () => {
    if (!(await confirm({ title: `Leave ${business.name}?`, detail: `You lose your ${business.seat ? "seat and what it grants" : "membership"}; only an owner or admin can invite you back.`, action: "Leave" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/businesses/{businessId}/members/{uid}", { params: { path: { businessId, uid } } }));
      await onChange();
      return `You left ${business.name}.`;
    });
  };

  return (
    <section aria-labelledby={headingId} class="panel">
      <h2 id={headingId}>{business.name}</h2>
      <PlanSection business={business} actions={actions} />
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {manages && members && <MembersTable business={business} members={members} uid={uid} actions={actions} />}
      {manages && <InvitationsSection invitations={invitations} actions={actions} />}
      {manages && <CompanyModulesSection api={api} businessId={businessId} businessName={business.name} owns={owns} />}
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
