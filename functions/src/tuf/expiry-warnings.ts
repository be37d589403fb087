import { mailStore, plainTextMail } from "../businesses/mail-store";
import type { Config } from "../config";
import { withinDeadline } from "../core/deadline";
import type { Deps } from "../deps";
import { tufRepositoryStore } from "./repository-store";
import { expiryWarnings, expiryWarningText } from "./rules";

/**
 * §23's daily warning: from 30 days before the root or targets metadata expire (only the offline
 * keys' ceremony renews them), an ERROR log line and an email to each of OPERATOR_EMAILS, once a
 * UTC day whichever instance's sweep comes first (`registry/tufExpiryWarning` holds the day last
 * warned, written in the transaction that queues the mail). Answers what it warned of, if it did.
 */
export async function warnOfExpiry(deps: Pick<Deps, "db" | "clock" | "logger"> & { config: Pick<Config, "operatorEmails"> }): Promise<string[]> {
  const store = tufRepositoryStore(deps.db);
  const state = await store.state();
  const now = deps.clock();
  const warnings = state ? expiryWarnings(state, now).map(expiryWarningText) : [];
  if (warnings.length === 0) return [];
  const day = now.toISOString().slice(0, 10);
  const warned = await withinDeadline(
    "Firestore (tuf expiry)",
    deps.db.runTransaction(async (tx) => {
      if ((await store.warnedDayIn(tx)) === day) return false;
      store.setWarnedDayIn(tx, day, now);
      const text = `The module repository's TUF metadata needs the offline keys' ceremony:\n\n${warnings.map((warning) => `- ${warning}`).join("\n")}\n\nSee the operators' guide, "The TUF repository". This warning repeats daily until it is done.`;
      for (const to of deps.config.operatorEmails) mailStore(deps.db).queueIn(tx, plainTextMail(to, "TUF root or targets metadata expire soon", text), now);
      return true;
    }),
  );
  if (!warned) return [];
  deps.logger.error("TUF root or targets metadata expire soon: renew them with `tuf rotate`", { warnings, emailed: deps.config.operatorEmails.length });
  return warnings;
}
