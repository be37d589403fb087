import type { Firestore, Transaction, WriteBatch } from "firebase-admin/firestore";
import { Timestamp } from "firebase-admin/firestore";
import { documentAt, oncePerDatabase } from "../core/documents";
import { randomBase62 } from "../core/secret-tokens";

/**
 * `mail/{id}`: outgoing email in the shape of the Firebase "Trigger Email" extension (`to`,
 * `message: { subject, text, html }`), which sends each new document through the SMTP server it
 * is configured with and records the delivery on the document.
 */
/** Text made safe to place in an email's HTML part. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** An email written as plain text, with its HTML part made from it: a paragraph at each blank line, other line breaks kept. */
export function plainTextMail(to: string, subject: string, text: string): MailMessage {
  return { to, subject, text, html: `<p>${escapeHtml(text).replaceAll("\n\n", "</p><p>").replaceAll("\n", "<br>")}</p>` };
}

export const mailStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("mail");
  return {
    queueIn(tx: Transaction | WriteBatch, message: MailMessage, at: Date): void {
      (tx as WriteBatch).create(documentAt(collection, randomBase62(20)), {
        to: message.to,
        message: { subject: message.subject, text: message.text, html: message.html },
        createdAt: Timestamp.fromDate(at),
      });
    },
  };
});
