import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { noticeInputSchema, receivedNoticeSchema } from "./schemas";
import { receiveNotice } from "./service";

/** Notices (contract §30, the DSA's Art. 16): no account needed. */
export const noticeRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/notices",
    operationId: "sendNotice",
    summary: "Tells the marketplace that a module, a version or a review is illegal or breaks its terms; no account needed.",
    description:
      "With an ID token, the reporter is the account (its name and email); a trusted flagger's account (Art. 22) is listed first. The reporter's email gets a confirmation; the appeal token lets the reporter appeal the decision. §1's rate limits apply.",
    tag: "Notices",
    auth: "optional",
    body: noticeInputSchema,
    shownOnce: ["appealToken"],
    responses: { 201: { description: "Received.", schema: receivedNoticeSchema } },
    problems: ["module_not_found", "review_not_found"],
    handle: async ({ caller, actor, body }) => ({ status: 201, body: await receiveNotice(deps, caller, actor, body) }),
  }),
];
