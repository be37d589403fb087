import fc from "fast-check";
import { checkWebhookUrl, hostAsWritten, isPublicAddress } from "./url-rules";

/** Every spelling the WHATWG URL parser reads as this IPv4 address. */
function spellings(octets: number[]): string[] {
  const value = octets.reduce((sum, octet) => sum * 256 + octet, 0);
  return [
    octets.join("."),
    String(value),
    `0x${value.toString(16)}`,
    `0${value.toString(8)}`,
    octets.map((octet) => `0x${octet.toString(16)}`).join("."),
    octets.map((octet) => `0${octet.toString(8)}`).join("."),
    `${octets[0]}.${octets[1]}.${octets[2] * 256 + octets[3]}`,
    `[::ffff:${octets.join(".")}]`,
  ];
}

const refuses = (url: string) => {
  try {
    checkWebhookUrl(url, []);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === "invalid_webhook_url";
  }
};

describe("webhook URL rules (§21)", () => {
  it("refuses every spelling of loopback, private, link-local, shared and reserved IPv4 addresses", () => {
    const privateOctets = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(198), fc.integer({ min: 18, max: 19 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.integer({ min: 224, max: 255 }), fc.nat(255), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(privateOctets, (octets) => {
        for (const host of spellings(octets)) expect([host, refuses(`https://${host}/hook`)]).toEqual([host, true]);
      }),
    );
  });

  it("takes public IPv4 addresses in any spelling, and names", () => {
    // Every IPv4 spelling; an IPv4-mapped IPv6 address is refused whatever it maps (§21).
    for (const host of spellings([8, 8, 4, 4]).filter((host) => !host.startsWith("["))) expect(checkWebhookUrl(`https://${host}/hook`, []).url.hostname).toBe("8.8.4.4");
    expect(refuses("https://[::ffff:8.8.4.4]/")).toBe(true);
    expect(checkWebhookUrl("https://hooks.example.com:8443/in?x=1", []).hostname).toBe("hooks.example.com");
    expect(isPublicAddress("2001:4860:4860::8888")).toBe(true);
  });

  it("refuses IPv6 loopback, unique-local, link-local and every form that embeds IPv4", () => {
    for (const host of ["[::1]", "[::]", "[fc00::1]", "[fd12:3456::1]", "[fe80::1]", "[::ffff:7f00:1]", "[64:ff9b::a9fe:a9fe]", "[2002:7f00:1::]", "[2001:0::1]", "[ff02::1]"]) {
      expect([host, refuses(`https://${host}/`)]).toEqual([host, true]);
    }
  });

  it("refuses every IPv4-compatible IPv6 spelling (::/96) and anything outside 2000::/3", () => {
    const compatible = [
      "[::7f00:1]", "[::127.0.0.1]", "[0:0:0:0:0:0:7f00:1]", "[::7f00:0001]", "[0::7f00:1]", "[0000::7f00:1]", "[::7F00:1]",
      "[::a9fe:a9fe]", "[::169.254.169.254]", "[::c0a8:101]", "[::192.168.1.1]", "[::a00:1]", "[::10.0.0.1]", "[::ac10:1]",
      "[::172.16.0.1]", "[::6440:1]", "[::100.64.0.1]", "[::c612:1]", "[::f000:1]", "[::e000:1]", "[::0.0.0.1]", "[::808:808]", "[::8.8.8.8]",
    ];
    for (const host of compatible) {
      expect([host, refuses(`https://${host}/`)]).toEqual([host, true]);
      expect(() => checkWebhookUrl(`https://${host}/`, [])).toThrow(expect.objectContaining({ code: "invalid_webhook_url" }));
    }
    for (const address of ["100::1", "1::1", "4000::1", "::7f00:1"]) expect([address, isPublicAddress(address)]).toEqual([address, false]);
    expect(isPublicAddress("2a00:1450:4001::1")).toBe(true);
  });

  it("exempts a listed host only as written, and allows http: only there", () => {
    expect(checkWebhookUrl("http://127.0.0.1:9000/hook", ["127.0.0.1"]).exempt).toBe(true);
    for (const other of ["http://127.1:9000/", "http://2130706433/", "http://0x7f000001/", "http://[::ffff:127.0.0.1]/", "http://localhost/"]) {
      expect([other, refuses(other)]).toEqual([other, true]);
      expect(() => checkWebhookUrl(other, ["127.0.0.1"])).toThrow();
    }
    expect(hostAsWritten("https://user@[::1]:8443/x")).toBe("[::1]");
    expect(hostAsWritten("https://Example.COM:443/")).toBe("example.com");
  });

  it("refuses other schemes, credentials, and URLs over 2,000 characters", () => {
    for (const url of ["ftp://example.com/", "http://example.com/", "file:///etc/passwd", "https://u:p@example.com/", "https://example.com/" + "a".repeat(2_000), "//example.com/"]) {
      expect([url.slice(0, 40), refuses(url)]).toEqual([url.slice(0, 40), true]);
    }
  });
});
