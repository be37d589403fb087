/**
 * One sample of each kind of secret contract §14 names, for the package-check tests. They are
 * made-up values of the right shape, put together from parts so that no scanner mistakes this
 * file for a leak.
 */
const join = (...parts: string[]) => parts.join("");

export const SECRET_SAMPLES = {
  "private key": {
    text: join("-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA ", "PRIVATE KEY-----"),
    prefix: "----",
  },
  "AWS access key": { text: join("aws_access_key_id = ", "AKIA", "QWERTYUIOPASDFGH"), prefix: "AKIA" },
  "GitHub token": { text: join("token: ", "ghp_", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"), prefix: "ghp_" },
  "GitHub fine-grained token": { text: join("github", "_pat_", "11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456"), prefix: "gith" },
  "Google API key": { text: join("const key = '", "AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY';"), prefix: "AIza" },
  "Stripe secret key": { text: join("STRIPE_KEY=", "sk_", "live_", "51HqLyjWDarjtT1zdp7dcXm1cXfsdf8Sdf8sd8fSDF"), prefix: "sk_l" },
  "Stripe restricted key": { text: join("key: ", "rk_", "live_", "51HqLyjWDarjtT1zdp7dcXm1cXfsdf8Sdf8sd8fSDF"), prefix: "rk_l" },
  "Slack token": { text: join("SLACK=", "xoxb-", "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"), prefix: "xoxb" },
  "npm token": { text: join("//registry.npmjs.org/:_authToken=", "npm_", "abcdefghijklmnopqrstuvwxyz0123456789"), prefix: "npm_" },
} as const;

/** The secret itself in a sample line (what must never appear in an answer). */
export const secretOf = (text: string) => text.split(/[ =:'"]+/).filter((part) => part.length >= 20).at(-1) ?? text;

/** Text full of ordinary words and code that must pass. */
export const ORDINARY_TEXT = [
  "# Charts",
  "Draws charts from your data. The key to good charts is a clear axis; see the private notes below.",
  "export function token(secret) { return `sk-${secret}`; } // not a live key",
  "password: use the one from your password manager",
  "AKIA is how AWS access keys start; ghp_ starts GitHub tokens.",
].join("\n");
