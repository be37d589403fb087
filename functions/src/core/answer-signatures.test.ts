import { generateKeyPairSync, sign as signBytes, verify } from "node:crypto";
import fc from "fast-check";
import { httpbis } from "http-message-signatures";
import { ANSWER_SIGNATURE_LABEL, answerSignature, answerSignatureBase, SIGNED_COMPONENTS, type SignedAnswer } from "./answer-signatures";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const sign = (data: Buffer) => signBytes(null, data, privateKey);

/** What the `http-message-signatures` package makes of the same answer: its signature base and its headers. */
async function byThePackage(answer: SignedAnswer) {
  let base = "";
  const signed = await httpbis.signMessage(
    {
      key: { id: answer.keyId, alg: "ed25519", sign: async (data: Buffer) => ((base = data.toString()), sign(data)) },
      name: ANSWER_SIGNATURE_LABEL,
      fields: SIGNED_COMPONENTS,
      params: ["created", "keyid", "alg", ...(answer.nonce === undefined ? [] : ["nonce"])],
      paramValues: { created: answer.created, ...(answer.nonce === undefined ? {} : { nonce: answer.nonce }) },
    },
    { status: answer.status, headers: { "content-digest": answer.contentDigest, "content-type": answer.contentType } },
  );
  const headers = signed.headers as Record<string, string | string[]>;
  return { base, headers: { "Signature-Input": headers["Signature-Input"], Signature: headers["Signature"] } };
}

/** Visible ASCII, as a nonce (answer-signatures.ts refuses anything else) or a key id may be. */
const visible = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 80 });
const answers: fc.Arbitrary<SignedAnswer> = fc.record(
  {
    status: fc.integer({ min: 100, max: 599 }),
    contentDigest: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((digest) => `sha-256=:${Buffer.from(digest).toString("base64")}:`),
    contentType: fc.constantFrom("application/json; charset=utf-8", "application/problem+json; charset=utf-8", "text/plain", ""),
    // From 2000 to 2100 (the package leaves out a `created` of 0, the epoch's first second).
    created: fc.date({ min: new Date(946684800000), max: new Date(4102444800000), noInvalidDate: true }),
    keyId: visible,
    nonce: visible,
  },
  { requiredKeys: ["status", "contentDigest", "contentType", "created", "keyId"] },
);

describe("answer signatures (RFC 9421)", () => {
  it("builds the same signature base and headers as the http-message-signatures package, byte for byte", async () => {
    await fc.assert(
      fc.asyncProperty(answers, async (answer) => {
        const theirs = await byThePackage(answer);
        expect(answerSignatureBase(answer).base).toBe(theirs.base);
        // Ed25519 is deterministic: the same base gives the same signature.
        expect(answerSignature(answer, sign)).toEqual(theirs.headers);
      }),
      { numRuns: 300 },
    );
  });

  it("escapes quotes and backslashes of a nonce, and the signature verifies over the base", () => {
    const answer: SignedAnswer = { status: 200, contentDigest: "sha-256=:AAAA:", contentType: "application/json", created: new Date(1_700_000_000_500), keyId: "k1", nonce: 'a"b\\c' };
    const { base, params } = answerSignatureBase(answer);
    expect(params).toBe('("@status" "content-digest" "content-type");created=1700000000;keyid="k1";alg="ed25519";nonce="a\\"b\\\\c"');
    expect(base.split("\n")).toEqual(['"@status": 200', '"content-digest": sha-256=:AAAA:', '"content-type": application/json', `"@signature-params": ${params}`]);
    const { Signature } = answerSignature(answer, sign);
    expect(verify(null, Buffer.from(base), publicKey, Buffer.from(Signature.slice("sig1=:".length, -1), "base64"))).toBe(true);
  });
});
