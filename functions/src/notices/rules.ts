/** The words of §30's notices: what a notice is about, and who sent it. */

export const NOTICE_CATEGORIES = ["illegal_content", "intellectual_property", "malware", "scam_or_fraud", "protection_of_minors", "privacy", "other"] as const;
export type NoticeCategory = (typeof NOTICE_CATEGORIES)[number];

/** Who sent a notice: nobody signed in, a signed-in user, or a trusted flagger (Art. 22), whose notices come first. */
export const NOTICE_SOURCES = ["anonymous", "signed_in", "trusted_flagger"] as const;
export type NoticeSource = (typeof NOTICE_SOURCES)[number];
