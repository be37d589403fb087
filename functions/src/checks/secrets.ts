import { lintSource } from "@secretlint/core";
import { creator as patternRule } from "@secretlint/secretlint-rule-pattern";
import { creator as recommendedPreset } from "@secretlint/secretlint-rule-preset-recommend";
import type { SecretLintCoreConfig, SecretLintRuleCreator, SecretLintRulePresetCreator } from "@secretlint/types";

/**
 * Secrets in a package's text entries (contract §14), found with secretlint's recommended preset:
 * private keys, AWS, GitHub, Slack, npm and two dozen more services, maintained upstream. What the
 * preset lacks is added as secretlint pattern rules: Google API keys and Stripe live secret and
 * restricted keys (gitleaks' expressions), AWS access key ids, and every private key the preset's
 * rule misses. That rule wants a body of 100 characters or more between the PEM lines and knows
 * five labels, so the short modern keys (Ed25519, X25519: 64 characters), encrypted PKCS#8 and
 * PuTTY files pass it; here any `BEGIN … PRIVATE KEY` label followed by a body counts, also
 * inside a JSON string (`\n` escapes), and a PuTTY file by its private part.
 */

export interface SecretFinding {
  check: "secret";
  /** The rule that matched, e.g. "github/GITHUB_TOKEN" or "pattern/Stripe secret key". */
  rule: string;
  path: string;
  /** 1-based. */
  line: number;
  /** The first characters of the secret only (EXCERPT_CHARACTERS), never the rest. */
  excerpt: string;
}

/** Text entries up to this size are scanned for secrets; larger ones are left to their hash. */
export const MAX_SCANNED_ENTRY_BYTES = 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The bytes as UTF-8 text, or null when they are not. */
export function textOf(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** A secret is shown by this many of its first characters at most. */
export const EXCERPT_CHARACTERS = 4;

const RULE_PREFIX = "@secretlint/secretlint-rule-";

/**
 * The preset reads `secretlint-disable` comments in the scanned text: a package could then hide
 * its own secrets from the check. Its comment filter is left out; every other rule of the preset
 * is registered as the preset registers it.
 */
const COMMENT_FILTER_RULE = `${RULE_PREFIX}filter-comments`;
const presetWithoutCommentDirectives: SecretLintRulePresetCreator = {
  ...recommendedPreset,
  create(context, options) {
    recommendedPreset.create(
      { ...context, registerRule: (rule: SecretLintRuleCreator, defaults?: unknown) => (rule.meta.id === COMMENT_FILTER_RULE ? undefined : context.registerRule(rule, defaults as never)) },
      options,
    );
  },
};

/**
 * A line break in a file, or one escaped inside a JSON or code string. The expressions below keep
 * every character in one place only (a break never overlaps a line's text), so a hostile 1 MiB
 * line makes no catastrophic backtracking.
 */
const BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)`;
/** A PEM line of a key indented in YAML or code: the break and the indentation. */
const INDENTED_BREAK = String.raw`${BREAK}[ \t]*`;
const LINE_TEXT = String.raw`[^\r\n\\]*`;
const KEY_BODY = "[A-Za-z0-9+/=]{16}";

const CONFIG: SecretLintCoreConfig = {
  rules: [
    {
      id: `${RULE_PREFIX}preset-recommend`,
      rule: presetWithoutCommentDirectives,
    },
    {
      id: `${RULE_PREFIX}pattern`,
      rule: patternRule,
      options: {
        patterns: [
          // The preset's AWS access key id expression, on its own: its enableIDScanRule brings an
          // account-id expression too, which is not a secret and cost a sixth of the whole scan.
          { name: "AWS access key ID", pattern: "/\\b(?:A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}\\b/" },
          { name: "Google API key", pattern: "/\\bAIza[0-9A-Za-z_-]{35}\\b/" },
          { name: "Stripe secret key", pattern: "/\\b[rs]k_live_[0-9a-zA-Z]{20,247}\\b/" },
          {
            name: "private key",
            patterns: [
              // The label, PEM headers such as Proc-Type (encrypted PKCS#1) or PGP's Version, then key material.
              String.raw`/-----BEGIN ?(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:${INDENTED_BREAK})+(?:[A-Za-z-]+:${LINE_TEXT}(?:${INDENTED_BREAK})+)*${KEY_BODY}/`,
              String.raw`/PuTTY-User-Key-File-\d+:${LINE_TEXT}(?:${BREAK}${LINE_TEXT}){0,40}?${BREAK}Private-Lines: *\d+${BREAK}${KEY_BODY}/`,
            ],
          },
        ],
      },
    },
  ],
};

/** The secrets in one text entry of a package, in the order they appear. */
export async function findSecrets(path: string, text: string): Promise<SecretFinding[]> {
  const result = await lintSource({
    source: { filePath: `/${path}`, content: text, contentType: "text" },
    options: { config: CONFIG, noPhysicFilePath: true },
  });
  // One secret found by two rules (an RSA key: the preset's and the pattern) is one finding, the first rule's.
  const distinct: typeof result.messages = [];
  for (const message of [...result.messages].sort((a, b) => a.range[0] - b.range[0])) {
    if (distinct.length === 0 || message.range[0] >= distinct.at(-1)!.range[1]) distinct.push(message);
  }
  return distinct.map((message) => ({
    check: "secret" as const,
    rule: ruleName(message.ruleId, message.messageId, message.data),
    path,
    line: message.loc.start.line,
    excerpt: excerptOf(text.slice(message.range[0], message.range[1])),
  }));
}

function ruleName(ruleId: string, messageId: string | undefined, data: unknown): string {
  const rule = ruleId.startsWith(RULE_PREFIX) ? ruleId.slice(RULE_PREFIX.length) : ruleId;
  const patternName = (data as { PATTERN_NAME?: unknown } | undefined)?.PATTERN_NAME;
  const detail = typeof patternName === "string" ? patternName : messageId;
  return detail ? `${rule}/${detail}` : rule;
}

/** "ghp_…": at most the first EXCERPT_CHARACTERS characters (fewer of a short secret), then an ellipsis. */
export function excerptOf(secret: string): string {
  const shown = Array.from(secret.trimStart()).slice(0, Math.min(EXCERPT_CHARACTERS, Math.floor(secret.length / 2)));
  return `${shown.join("")}…`;
}
