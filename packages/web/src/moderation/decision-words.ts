import type { Schemas } from "../api";

/** §30's words as people read them: decisions, grounds, and notices' categories and sources (the Report form's too). */

type Decision = Schemas["Decision"];

export const DECISION_WORDS: Record<Decision["decision"], string> = {
  no_action: "No action",
  restrict_visibility: "Taken out of listings and search",
  remove: "Removed",
  suspend_publisher: "Publisher suspended",
};

export const GROUND_WORDS: Record<Decision["ground"], string> = { law: "Illegal under", terms: "Against the terms:" };

export const CATEGORY_WORDS: Record<Decision["category"], string> = {
  malware: "Malware",
  scam_or_fraud: "Scam or fraud",
  illegal_content: "Illegal content",
  intellectual_property: "Intellectual property",
  privacy: "Privacy",
  protection_of_minors: "Protection of minors",
  other: "Something else",
};

export const SOURCE_WORDS: Record<keyof Schemas["TransparencyFigures"]["notices"]["bySource"], string> = {
  anonymous: "Visitors without an account",
  signed_in: "Signed-in users",
  trusted_flagger: "Trusted flaggers",
};
