import { withinDeadline } from "../core/deadline";
import { plainTextMail, type MailMessage } from "../businesses/mail-store";
import { ownerEmailsOf } from "../businesses/membership";
import type { OperatorDeps } from "../deps";
import { developerStore } from "../developers/developer-store";
import type { AppealRecord } from "./appeal-store";
import type { DecisionRecord } from "./decision-store";
import { appealOpenUntil, type DecisionKind } from "./rules";

/**
 * Statements of reasons (contract §30, the DSA's Art. 17(3)): what was decided and how far it
 * reaches, the facts, whether automated means were used, the ground, and how to seek redress. The
 * affected side's never names the reporter; the reporter's never names the affected side's people.
 */

const WHAT_IT_DOES: Record<DecisionKind, (decision: DecisionRecord) => string> = {
  no_action: () => "We took no action: the content stays as it was.",
  remove: (decision) =>
    decision.reviewId
      ? "We removed the review: it is no longer shown or counted in the module's rating."
      : `We removed ${decision.version ? `version ${decision.version} of ` : ""}the module: it is revoked (it can no longer be downloaded, and the desktop app refuses to load it).`,
  restrict_visibility: () => "We restricted the module's visibility: it is no longer listed, found in search or suggested; its page stays reachable by its address.",
  suspend_publisher: (decision) => `We suspended the publisher '${decision.publisherId}': none of its modules is listed, found or suggested, and it cannot sign or publish.`,
};

const contentOf = (decision: DecisionRecord) => (decision.reviewId ? `a review of ${decision.moduleId}` : decision.version ? `${decision.moduleId} ${decision.version}` : decision.moduleId);

const groundOf = (decision: DecisionRecord) =>
  decision.ground === "law" ? `The content is illegal under ${decision.reference}.` : `The content is incompatible with our terms: ${decision.reference}.`;

const mail = (to: string, subject: string, paragraphs: string[]): MailMessage => plainTextMail(to, subject, paragraphs.join("\n\n"));

function statementParagraphs(decision: DecisionRecord): string[] {
  return [
    WHAT_IT_DOES[decision.decision](decision),
    "It applies wherever the marketplace is offered, until an appeal reverses it.",
    `Facts and circumstances:\n${decision.facts}`,
    `We decided in response to notice ${decision.noticeId} (${decision.category.replaceAll("_", " ")}).`,
    decision.automated ? "Automated means took part in this decision." : "A person decided; no automated means were used.",
    decision.decision === "no_action" ? `We found no breach to act on (${decision.ground}: ${decision.reference}).` : groundOf(decision),
  ];
}

/** The statement the affected side gets: the publisher, or a review's author. */
export function statementToAffected(to: string, decision: DecisionRecord): MailMessage {
  return mail(to, `Decision ${decision.id} on ${contentOf(decision)}`, [
    ...statementParagraphs(decision),
    `You may appeal until ${appealOpenUntil(decision.decidedAt).toISOString().slice(0, 10)}: ${decision.reviewId ? "POST /api/v1/decisions/" + decision.id + "/appeals with your account" : "in the publisher portal under Decisions, or POST /api/v1/decisions/" + decision.id + "/appeals"}. An appeal is heard by another operator than the one who decided. You may also turn to a certified out-of-court dispute settlement body or to a court.`,
  ]);
}

/** The statement the reporter gets. */
export function statementToReporter(to: string, decision: DecisionRecord): MailMessage {
  return mail(to, `Decision on your notice ${decision.noticeId}`, [
    `We decided on your notice ${decision.noticeId} about ${contentOf(decision)}.`,
    ...statementParagraphs(decision),
    `If you disagree, you may appeal until ${appealOpenUntil(decision.decidedAt).toISOString().slice(0, 10)} with the appeal token you were shown when you sent the notice: POST /api/v1/decisions/${decision.id}/appeals. You may also turn to a certified out-of-court dispute settlement body or to a court.`,
  ]);
}

/** What each side is told once an appeal is decided. */
export function appealOutcomeMail(to: string, decision: DecisionRecord, appeal: AppealRecord): MailMessage {
  const outcome =
    appeal.status === "reversed"
      ? decision.decision === "no_action"
        ? "The appeal was successful: the decision to take no action is reversed, and the notice is decided again."
        : "The appeal was successful: the decision is reversed and its effect undone."
      : "The appeal was not successful: the decision stands.";
  return mail(to, `Appeal ${appeal.id} on decision ${decision.id}: ${appeal.status}`, [
    `An operator other than the one who decided heard the ${appeal.side === "reporter" ? "reporter's" : "affected side's"} appeal against decision ${decision.id} on ${contentOf(decision)}.`,
    outcome,
    `Reasons:\n${appeal.reasons ?? ""}`,
    "You may still turn to a certified out-of-court dispute settlement body or to a court.",
  ]);
}

/** Who a decision affects, by email: the publisher's developer (or a business publisher's owners), or the review's author. */
export async function affectedEmails(deps: Pick<OperatorDeps, "db" | "auth">, decision: Pick<DecisionRecord, "publisherId" | "authorUid">): Promise<string[]> {
  if (decision.authorUid) {
    const author = await withinDeadline("Auth", deps.auth.getUser(decision.authorUid)).catch(() => null);
    return author?.email ? [author.email] : [];
  }
  const claim = await developerStore(deps.db).claim(decision.publisherId);
  if (!claim) return [];
  if ("businessId" in claim) return ownerEmailsOf(deps, claim.businessId);
  const developer = await developerStore(deps.db).get(claim.developerId);
  return developer?.email ? [developer.email] : [];
}
