import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import type { Express } from "express";
import { buildSite } from "../../tools/build-site";
import { startLocalStripe, type LocalStripe } from "../../tools/local-stack/stripe-server";
import { LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET } from "../src/config";
import { createApp } from "../src/app";
import { localServer } from "../src/local";
import { localSite } from "../src/local-site";
import { drainDownloadCounters } from "../src/marketplace/download-counter";
import { decideAppeal, decideNotice, listAppeals } from "../src/moderation/service";
import { HOSTILE_README, pngImage } from "./support/packages";
import { daysFromNow, putBusiness, putSubscription } from "./support/fixtures";
import { startReceiver } from "./support/webhook-receiver";
import { startLocalDns, type LocalDns } from "../../tools/local-stack/dns-server";
import { runDeployedFunctions, type DeployedFunctions } from "../src/local-functions";
import { createDeveloper, createUser, declareTrader, eventually, foldCounts, operatorDeps, projectId, publishModule, resetEmulators, testDeps, type TestDeveloper } from "./support/harness";

/**
 * The pages of contract §16, end to end in Debian's Chromium (playwright-core) against the site
 * as `npm start` serves it: built by tools/build-site.ts, behind firebase.json's headers (its
 * Content-Security-Policy included), the API on the emulators, Firebase Auth's JS SDK signing in
 * on the Auth emulator through the site's own origin.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const EXTRA_MODULES = 11;
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

interface Watch {
  outside: string[];
  problems: string[];
}

describe("web pages (§16)", () => {
  let siteDir: string;
  let server: Server;
  let origin: string;
  let stripe: LocalStripe;
  let browser: Browser;
  let developer: TestDeveloper;
  let webhooks: DeployedFunctions;
  /** What tests started that must stop however they end. */
  const afterAllStops: (() => Promise<void>)[] = [];
  let dns: LocalDns;
  const icon = pngImage(96, 96);

  const api = (pathname: string, token?: string) => fetch(`${origin}/api/v1${pathname}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    await resetEmulators();
    siteDir = buildSite(mkdtempSync(path.join(tmpdir(), "marketplace-site-")));
    const deps = await testDeps();
    // The site and a local Stripe each need the other's address: the server starts first, and serves the site once both are up.
    const site: { current?: Express } = {};
    server = localServer((req, res) => site.current!(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stripe = await startLocalStripe({ prices: [], webhook: { url: `${origin}/api/v1/billing/stripe/webhook`, secret: LOCAL_STRIPE_WEBHOOK_SECRET, connectSecret: LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET } });
    const billing = { ...deps.config.billing, stripeSecretKey: "sk_test_local", apiBase: { protocol: "http" as const, host: "127.0.0.1", port: Number(new URL(stripe.url).port) } };
    // Stripe's pages return to this site: its own address is the public one.
    dns = await startLocalDns();
    afterAllStops.push(() => dns.stop());
    site.current = localSite(createApp({ ...deps, config: { ...deps.config, billing, publicBaseUrl: `${origin}/api/v1`, dnsResolvers: [dns.address] } }), { hostingDir: siteDir, projectId, authEmulatorHost: process.env.FIREBASE_AUTH_EMULATOR_HOST });
    // Webhooks go out through the deployed functions, as on npm start.
    webhooks = await runDeployedFunctions(deps.db, { triggers: ["webhookEvents"], schedules: { webhookSweep: 1_000 }, warn: deps.logger.warn });
    developer = await createDeveloper("acme");
    await publishModule(developer, { id: "acme.plotter", name: "Plotter", summary: "Plots data on a grid.", version: "1.0.0", category: "data", maxAppVersion: "3.0.0" }, [
      { name: "README.md", content: HOSTILE_README },
      { name: "CHANGELOG.md", content: "# Changelog\n\n## 1.0.0\n\n- First plotted release.\n" },
      { name: "icon.png", content: icon },
    ]);
    await publishModule(developer, { id: "acme.plotter", name: "Plotter", summary: "Plots data on a grid.", version: "1.1.0", category: "data" }, [
      { name: "README.md", content: HOSTILE_README },
      { name: "CHANGELOG.md", content: "# Changelog\n\n## 1.1.0\n\n- Plots faster.\n\n## 1.0.0\n\n- First plotted release.\n" },
      { name: "icon.png", content: icon },
    ]);
    await publishModule(developer, { id: "acme.weather", name: "Weather", summary: "Forecasts for your city.", version: "2.0.0", category: "outdoors", entitlement: "pro" });
    // Enough modules for a second page (the marketplace shows 12 at a time).
    for (let index = 1; index <= EXTRA_MODULES; index += 1) {
      await publishModule(developer, { id: `acme.tool-${index}`, name: `Tool ${index}`, summary: "A small tool.", version: "1.0.0", category: "tools" });
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stripe?.stop();
    await webhooks?.stop();
    await Promise.all(afterAllStops.map((stop) => stop()));
    await new Promise((resolve) => server?.close(resolve));
    rmSync(siteDir, { recursive: true, force: true });
  });

  /** A fresh page that records every request leaving the site and everything that went wrong on it. */
  async function openPage(width = 1200): Promise<{ page: Page; watch: Watch }> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    const page = await context.newPage();
    const watch: Watch = { outside: [], problems: [] };
    page.on("request", (sent) => {
      if (!sent.url().startsWith(`${origin}/`)) watch.outside.push(sent.url());
    });
    page.on("pageerror", (error) => watch.problems.push(`page error: ${error.message}`));
    page.on("dialog", (dialog) => {
      watch.problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("console", (message) => {
      // Refusals the tests provoke (a two-word search, a wrong password) are logged by the browser as failed loads.
      if (message.type() === "error" && !/the server responded with a status of 4\d\d/.test(message.text())) watch.problems.push(`console: ${message.text()}`);
    });
    return { page, watch };
  }

  /** axe-core's serious and critical violations (run through the DevTools protocol, so the page's CSP stays on). */
  async function seriousViolations(page: Page): Promise<string[]> {
    await page.evaluate(`${axeSource}\n;undefined`);
    const results = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as {
      violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
    };
    return results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical").map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  }

  // Code run in the page is given as text: this project compiles without the DOM's types.
  const scrollsSideways = (page: Page) => page.evaluate("document.documentElement.scrollWidth > window.innerWidth");

  const done = (watch: Watch) => {
    expect(watch.problems).toEqual([]);
    expect(watch.outside).toEqual([]);
  };

  it("serves the pages with hashed, immutable assets, a fallback for page routes, and the site's security headers", async () => {
    const home = await fetch(`${origin}/modules/acme.plotter`);
    expect(home.status).toBe(200);
    expect(home.headers.get("cache-control")).toBe("no-cache");
    expect(home.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await home.text();
    const asset = html.match(/\/assets\/index-[\w-]+\.js/)?.[0];
    expect(asset).toBeDefined();
    const script = await fetch(`${origin}${asset}`);
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await fetch(`${origin}/api/v1/nothing-here`)).headers.get("content-type")).toMatch(/problem\+json/);
  });

  it("/ lists the modules as cards, searches phrases, sorts, filters through facets with counts, and pages", async () => {
    const { page, watch } = await openPage();
    await page.goto(`${origin}/`);
    const cards = page.locator("ul.cards > li");
    await expect_(async () => expect(await cards.count()).toBe(12));
    await page.click("button:has-text('Show more modules')");
    await expect_(async () => expect(await cards.count()).toBe(2 + EXTRA_MODULES));
    expect(await page.locator("button:has-text('Show more modules')").count()).toBe(0);
    const plotterCard = cards.filter({ hasText: "Plotter" });
    // The icon arrives after the card: wait for it to load.
    await expect_(async () => expect(await plotterCard.locator("img.module-icon").evaluate((image) => (image as unknown as { complete: boolean; naturalWidth: number }).naturalWidth)).toBe(96));
    expect(await cards.filter({ hasText: "Weather" }).locator(".badge").textContent()).toBe("Needs pro");
    expect(await seriousViolations(page)).toEqual([]);

    await page.fill("#search-q", "plots grid");
    await page.click("form[role=search] button[type=submit]");
    await page.waitForURL(`${origin}/?q=plots+grid`);
    await expect_(async () => expect(await cards.allTextContents()).toEqual([expect.stringContaining("Plotter")]));
    expect(await page.locator("#search-sort").inputValue()).toBe("relevance");

    // A facet link filters, with the count the API gave; the sort is kept in the address.
    await page.goto(`${origin}/`);
    await expect_(async () => expect(await page.locator("[role=status]").first().textContent()).toBe(`${2 + EXTRA_MODULES} modules.`));
    const outdoors = page.locator("nav.facets a", { hasText: "outdoors" });
    await expect_(async () => expect(await outdoors.textContent()).toBe("☐ outdoors (1)"));
    await outdoors.click();
    await expect_(async () => expect(await cards.allTextContents()).toEqual([expect.stringContaining("Weather")]));
    await page.selectOption("#search-sort", "name");
    await page.waitForURL(/sort=name/);
    expect(new URL(page.url()).searchParams.get("category")).toBe("outdoors");
    expect(await cards.first().locator(".stars").textContent()).toBe("No reviews yet");

    // §24: the other values stay in view and combine (any of them), each choice a chip that removes it.
    await page.locator("nav.facets a", { hasText: "data" }).click();
    await page.waitForURL(/category=outdoors%2Cdata/);
    await expect_(async () => expect((await cards.allTextContents()).length).toBe(2));
    expect(await page.locator("ul.chips a").allTextContents()).toEqual(["Category: outdoors ×", "Category: data ×", "Clear all"]);
    expect(await page.locator("[role=status]").first().textContent()).toBe("2 modules category outdoors or data.");
    await page.click("ul.chips a[aria-label='Remove category outdoors']");
    await expect_(async () => expect(await cards.allTextContents()).toEqual([expect.stringContaining("Plotter")]));
    expect(await seriousViolations(page)).toEqual([]);

    // A swap of two letters is one edit; a misspelling beyond what search forgives gets a suggestion.
    await page.goto(`${origin}/?q=plotetr`);
    await expect_(async () => expect(await cards.allTextContents()).toEqual([expect.stringContaining("Plotter")]));
    await page.goto(`${origin}/?q=wxathxr`);
    await page.locator("p.suggestion a").click();
    await page.waitForURL(`${origin}/?q=weather`);
    await expect_(async () => expect(await cards.allTextContents()).toEqual([expect.stringContaining("Weather")]));
    // Nothing at all: the most installed modules rather than an empty page.
    await page.goto(`${origin}/?q=qqqqqqqqqq`);
    await expect_(async () => expect(await page.locator("#popular-heading").textContent()).toBe("Most installed modules"));
    expect(await cards.count()).toBe(6);
    done(watch);

    // On a phone the filters fold behind a button, and the first result is on the first screen.
    const phone = await openPage(390);
    await phone.page.goto(`${origin}/`);
    const first = phone.page.locator("ul.cards > li").first();
    await first.waitFor();
    expect(await phone.page.locator("nav.facets").isVisible()).toBe(false);
    expect(((await first.boundingBox())!.y)).toBeLessThan(900);
    await phone.page.click("button.filters-toggle");
    expect(await phone.page.locator("nav.facets").isVisible()).toBe(true);
    expect(await seriousViolations(phone.page)).toEqual([]);
    await screenshot(phone.page, "marketplace-filters-390");
    done(phone.watch);
  });

  it("/modules/:id shows the icon, README, versions and changelog, and runs none of the README's code", async () => {
    const { page, watch } = await openPage();
    await page.goto(`${origin}/modules/acme.plotter`);
    await page.waitForSelector("h1:has-text('Plotter')");
    // Read until the browser has loaded it, as the listing's card is: right after the heading a loaded machine may not have (0 once in a clean-clone run).
    await expect_(async () => expect(await page.locator(".module-header img.module-icon").evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBe(96));
    const readme = page.locator(".markdown").first();
    expect(await readme.textContent()).toContain("Safe: the docs and code.");
    expect(await readme.locator("script, iframe, form, input, style, svg, object, embed, meta, base, img, [style], [onerror], [onclick], [onload]").count()).toBe(0);
    expect(new Set(await readme.locator("a").evaluateAll((links) => links.map((link) => link.getAttribute("rel"))))).toEqual(new Set(["noopener nofollow ugc"]));
    // Clicking what the README offers runs nothing either.
    for (const link of await readme.locator("a[href]").all()) expect(await link.getAttribute("href")).toMatch(/^(https?:|mailto:|[^:]*$)/);
    await readme.locator("summary").click();
    expect(await page.evaluate("typeof window.__pwned")).toBe("undefined");
    // §24: a main action (Install, through the app's URL scheme) and tabs, each with its own address.
    expect(await page.locator(".main-action a.button").getAttribute("href")).toBe("marketplace://install/acme.plotter");
    expect(await page.locator("[role=tab]").allTextContents()).toEqual(["Overview", "Reviews", "Versions", "Changelog"]);
    await page.click("[role=tab]:has-text('Versions')");
    await page.waitForURL(`${origin}/modules/acme.plotter#versions`);
    expect(await page.locator("#panel-versions table").textContent()).toMatch(/1\.1\.0.*Latest.*1\.0\.0.*up to 3\.0\.0/s);
    expect(await page.locator("#panel-overview").isVisible()).toBe(false);
    await page.keyboard.press("ArrowRight");
    await page.waitForURL(`${origin}/modules/acme.plotter#changelog`);
    expect(await page.locator("#panel-changelog .markdown").textContent()).toContain("Plots faster.");
    expect(await seriousViolations(page)).toEqual([]);
    await page.goBack();
    await expect_(async () => expect(await page.locator("#panel-versions").isVisible()).toBe(true));
    done(watch);
  });

  it("/publisher signs in, yanks and unyanks with the API agreeing, draws downloads per day, and creates, shows once and revokes a token", async () => {
    const reader = await createUser();
    for (let count = 0; count < 3; count += 1) expect((await api("/modules/download/acme.plotter?version=1.0.0", reader.idToken)).status).toBe(200);
    expect((await api("/modules/download/acme.plotter", reader.idToken)).status).toBe(200);
    await drainDownloadCounters();

    const { page, watch } = await openPage(1280);
    await page.goto(`${origin}/publisher`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.fill("#sign-in-password", "wrong-password");
    await page.fill("#sign-in-email", developer.email);
    await page.click("button[type=submit]");
    await expect_(async () => expect(await page.locator("[role=alert]").textContent()).toMatch(/email or password is wrong/));
    await page.fill("#sign-in-password", developer.password);
    await page.click("button[type=submit]");
    await page.waitForSelector("#modules-heading");
    expect(await page.locator(".module-panel h3").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("acme.plotter"), expect.stringContaining("acme.weather")]));

    // Yank and unyank 1.1.0; the API agrees each time.
    await page.fill("#reason-acme\\.plotter-1\\.1\\.0", "Plots upside down");
    // §24: it asks first, in a dialog naming the version withdrawn; Cancel withdraws nothing.
    const yankDialog = page.locator("dialog.confirm[open]");
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 900 });
      await page.click("button[aria-label='Yank acme.plotter 1.1.0']");
      await expect_(async () => expect(await yankDialog.locator("#confirm-title").textContent()).toMatch(/^Yank .* 1\.1\.0\?$/));
      expect(await yankDialog.locator("#confirm-detail").textContent()).toContain("Version 1.1.0 of acme.plotter is withdrawn");
      const box = (await yankDialog.boundingBox())!;
      expect(box.x >= 0 && box.x + box.width <= width).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `publisher-yank-dialog-${width}`);
      await yankDialog.locator("button.secondary").click();
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(((await (await api("/modules/acme.plotter")).json()) as { latestVersion: string }).latestVersion).toBe("1.1.0");
    await page.click("button[aria-label='Yank acme.plotter 1.1.0']");
    await yankDialog.locator("button.danger").click();
    await expect_(async () => expect(await page.locator("[role=status]").first().textContent()).toBe("Yanked acme.plotter@1.1.0."));
    // §24: the reason shows beside the state.
    await expect_(async () => expect(await page.locator(".module-panel .reason").filter({ hasText: "Plots upside down" }).count()).toBe(1));
    const yanked = (await (await api("/modules/acme.plotter")).json()) as { latestVersion: string; versions: { version: string; yanked: boolean }[] };
    expect(yanked.latestVersion).toBe("1.0.0");
    expect(yanked.versions.find((entry) => entry.version === "1.1.0")?.yanked).toBe(true);
    await page.click("button[aria-label='Unyank acme.plotter 1.1.0']");
    await expect_(async () => expect(await page.locator("[role=status]").first().textContent()).toBe("Put acme.plotter@1.1.0 back."));
    expect(((await (await api("/modules/acme.plotter")).json()) as { latestVersion: string }).latestVersion).toBe("1.1.0");

    // Downloads per day, drawn, in the Analytics tab: the chart's summary counts them and its canvas is painted.
    await page.click("#tab-analytics");
    expect(new URL(page.url()).hash).toBe("#analytics");
    await expect_(async () => expect(await page.locator("[aria-labelledby=downloads-heading] .chart figcaption").textContent()).toMatch(/^4 downloads of acme\.plotter .* versions 1\.1\.0, 1\.0\.0\.$/));
    // Painted once Chart.js has drawn it (its first frame follows the summary on a loaded machine).
    const painted = () =>
      page.evaluate(`(() => {
      const canvas = document.querySelector("[aria-labelledby=downloads-heading] .chart canvas");
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      let colored = 0;
      for (let at = 0; at < data.length; at += 4) if (data[at + 3] > 0 && !(data[at] === data[at + 1] && data[at + 1] === data[at + 2])) colored += 1;
      return colored;
    })()`);
    await expect_(async () => expect(await painted()).toBeGreaterThan(100));

    // A token, in its tab: created, shown once with a copy button, working, listed, revoked.
    await page.click("#tab-tokens");
    await page.fill("#token-name", "Portal CI");
    await page.click("button:has-text('Create token')");
    const shown = page.locator("#created-token");
    await shown.waitFor();
    const token = await shown.inputValue();
    expect(token).toMatch(/^mpt_/);
    await page.click(".created-token button:has-text('Copy')");
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(token);
    expect((await api("/developers/modules", token)).status).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    await page.reload();
    await page.waitForSelector("#tokens-heading");
    await expect_(async () => expect(await page.locator("table").filter({ hasText: "Portal CI" }).count()).toBe(1));
    expect(await page.content()).not.toContain(token);
    await page.click("button[aria-label='Revoke Portal CI']");
    // Revoking asks first, saying what stops working.
    const confirmRevoke = page.locator("dialog.confirm");
    await expect_(async () => expect(await confirmRevoke.locator("#confirm-title").textContent()).toBe("Revoke “Portal CI”?"));
    await confirmRevoke.locator("button.danger").click();
    await expect_(async () => expect(await page.locator("[role=status]").filter({ hasText: "Revoked “Portal CI”." }).count()).toBe(1));
    expect((await api("/developers/modules", token)).status).toBe(401);
    done(watch);
  }, 90_000);

  it("no page scrolls sideways at 375 px, and each is free of serious accessibility problems there too", async () => {
    const { page, watch } = await openPage(375);
    for (const pathname of ["/", "/modules/acme.plotter", "/transparency", "/publisher"]) {
      await page.goto(`${origin}${pathname}`);
      await page.waitForSelector("main h1");
      await page.waitForLoadState("networkidle");
      expect([pathname, await scrollsSideways(page)]).toEqual([pathname, false]);
      expect(await seriousViolations(page)).toEqual([]);
    }
    // The portal signed in, tab by tab (§28), with its tables, forms, charts and a token shown.
    await page.fill("#sign-in-email", developer.email);
    await page.fill("#sign-in-password", developer.password);
    await page.click("button[type=submit]");
    await page.waitForSelector("#modules-heading");
    const tabs = await page.locator("[role=tab]").allTextContents();
    expect(tabs).toEqual(["Modules", "Analytics", "Reviews", "Tokens and keys", "Payouts", "Webhooks", "Decisions"]);
    for (const [id, ready] of [
      ["modules", "#modules-heading"],
      ["analytics", "[aria-labelledby=downloads-heading] .chart canvas"],
      ["reviews", "#reviews-panel-heading"],
      ["tokens", "#keys-heading"],
      ["payouts", "#payouts-heading"],
      ["webhooks", "#webhooks-heading"],
      ["decisions", "#decisions-publisher-heading"],
    ]) {
      await page.click(`#tab-${id}`);
      await page.waitForSelector(ready);
      if (id === "tokens") {
        await page.fill("#token-name", "Narrow screen");
        await page.click("button:has-text('Create token')");
        await page.locator("#created-token").waitFor();
      }
      for (const details of await page.locator("[role=tabpanel]:not([hidden]) details").all()) await details.locator("summary").first().click();
      expect([id, await scrollsSideways(page)]).toEqual([id, false]);
      expect([id, await seriousViolations(page)]).toEqual([id, []]);
    }
    done(watch);
  });

  it("/modules/:id (§30): a visitor without an account reports a module, by keyboard at 375 px, and keeps the appeal token", async () => {
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/modules/acme.weather`);
    await page.waitForSelector("h1:has-text('Weather')");
    const open = page.locator("aside.resources button:has-text('Report illegal content')");
    await open.focus();
    await page.keyboard.press("Enter");
    const form = page.locator("form.report-form");
    await form.waitFor();
    await form.locator("input[value=scam_or_fraud]").check();
    await form.locator("textarea[name=explanation]").fill("It asks for card numbers to 'unlock' forecasts, then charges them.");
    await form.locator("input[name=email]").fill("visitor@example.test");
    await form.locator("input[name=goodFaith]").check();
    // An email without a name: said in the form, nothing sent.
    await form.locator("button[type=submit]").click();
    await expect_(async () => expect(await form.locator(".message.error, [role=alert]").textContent()).toContain("Give your name with your email"));
    await form.locator("input[name=goodFaith]").uncheck();
    await form.locator("input[name=name]").fill("Vic");
    expect(await seriousViolations(page)).toEqual([]);
    expect(await scrollsSideways(page)).toBe(false);
    // The good-faith statement is required: without it the browser keeps the form.
    await form.locator("button[type=submit]").click();
    expect(await form.isVisible()).toBe(true);
    await form.locator("input[name=goodFaith]").check();
    await form.locator("button[type=submit]").click();
    const received = page.locator(".report-received");
    await received.waitFor();
    const noticeId = (await received.locator("code").first().textContent())!;
    expect(noticeId).toMatch(/^ntc_/);
    expect(await received.locator("code.token").textContent()).toMatch(/^nap_/);
    await screenshot(page, "module-report-375");
    const { listNotices } = await import("../src/notices/service");
    const { operatorDeps } = await import("./support/harness");
    expect((await listNotices(await operatorDeps(), {})).find((notice) => notice.id === noticeId)).toMatchObject({
      source: "anonymous",
      category: "scam_or_fraud",
      target: { moduleId: "acme.weather", version: null },
      reporter: { name: "Vic", email: "visitor@example.test", uid: null },
    });
    done(watch);
  });

  it("§30 end to end at 375 px: an operator decides a report, the publisher reads the reasons in the portal and appeals by keyboard, a second operator reverses it, /transparency counts it", async () => {
    const operator = (email: string) => operatorDeps().then((deps) => ({ ...deps, actor: { kind: "operator" as const, id: email } }));
    const sent = await fetch(`${origin}/api/v1/notices`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ target: { moduleId: "acme.plotter" }, category: "malware", explanation: "It <b>installs</b> a miner beside the plots.", goodFaith: true }),
    });
    expect(sent.status).toBe(201);
    const noticeId = ((await sent.json()) as { id: string }).id;
    const decision = await decideNotice(await operator("first@ops.example"), noticeId, { decision: "restrict_visibility", ground: "terms", reference: "Terms 4.2 <malware>", facts: "A <script> runs a miner;\nit starts with the app." });

    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/publisher#decisions`);
    await page.fill("#sign-in-email", developer.email);
    await page.fill("#sign-in-password", developer.password);
    await page.click("button[type=submit]");
    const card = page.locator(`article.decision[aria-labelledby="decision-${decision.id}"]`);
    await card.waitFor();
    expect(await card.locator("h3").textContent()).toBe("acme.plotter: Taken out of listings and search");
    // The reasons, as text: markup in them is shown, never run.
    expect(await card.locator(".decision-facts").textContent()).toBe("A <script> runs a miner;\nit starts with the app.");
    expect(await card.locator("dd").allTextContents()).toContain("Against the terms: Terms 4.2 <malware>");
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    const appeal = card.locator("button:has-text('Appeal')");
    await appeal.focus();
    await page.keyboard.press("Enter");
    await page.keyboard.type("The miner is a benchmark the user starts, documented in the README.");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await card.locator(".appeal-state").waitFor();
    expect(await card.locator(".appeal-state").textContent()).toContain("being heard");
    await screenshot(page, "portal-decisions-375");

    const [filed] = (await listAppeals(await operator("first@ops.example"), {})).filter((item) => item.decisionId === decision.id);
    await expect(decideAppeal(await operator("first@ops.example"), filed.id, { outcome: "reversed", reasons: "Mine." })).rejects.toMatchObject({ code: "same_operator" });
    await decideAppeal(await operator("second@ops.example"), filed.id, { outcome: "reversed", reasons: "A benchmark the user starts is not malware." });
    await page.reload();
    await card.locator(".badge").waitFor();
    expect(await card.locator(".appeal-state").textContent()).toContain("successful");
    expect(await card.locator("button:has-text('Appeal')").count()).toBe(0);

    await page.goto(`${origin}/transparency`);
    const row = (caption: string, name: string) => page.locator(`table.counts:has(caption:text-is("${caption}")) tr:has(th:text-is("${name}")) td`);
    await row("Appeals", "Reversed").waitFor();
    expect(await row("Notices by who sent them", "Visitors without an account").textContent()).not.toBe("0");
    expect(await row("Decisions by kind", "Taken out of listings and search").textContent()).toBe("1");
    expect(await row("Appeals", "Reversed").textContent()).toBe("1");
    expect(await page.locator("table.stacked tbody tr").count()).toBe(1);
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "transparency-375");
    done(watch);

    // A review's author finds the decision about their review on the account page, and appeals it there (hidden, it is in no figure of later tests).
    const author = await createUser({ displayName: "Ray" });
    const headers = { Authorization: `Bearer ${author.idToken}`, "Content-Type": "application/json" };
    expect((await fetch(`${origin}/api/v1/modules/confirm`, { method: "POST", headers, body: JSON.stringify({ moduleId: "acme.plotter" }) })).status).toBe(200);
    const review = (await (await fetch(`${origin}/api/v1/modules/acme.plotter/reviews/me`, { method: "PUT", headers, body: JSON.stringify({ rating: 1, title: "Buy followers at spam.example" }) })).json()) as { id: string };
    const reported = await fetch(`${origin}/api/v1/notices`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ target: { reviewId: review.id }, category: "scam_or_fraud", explanation: "An advertisement for bought followers.", goodFaith: true }) });
    const removed = await decideNotice(await operator("first@ops.example"), ((await reported.json()) as { id: string }).id, { decision: "remove", ground: "terms", reference: "Terms 7 (reviews)", facts: "The review advertises a paid service." });
    const account = await openPage(375);
    await account.page.goto(`${origin}/account`);
    await account.page.fill("#sign-in-email", author.email);
    await account.page.fill("#sign-in-password", author.password);
    await account.page.click("button[type=submit]");
    const reviewCard = account.page.locator(`article.decision[aria-labelledby="decision-${removed.id}"]`);
    await reviewCard.waitFor();
    expect(await reviewCard.locator("h3").textContent()).toBe("A review of acme.plotter: Removed");
    await reviewCard.locator("button:has-text('Appeal')").click();
    await reviewCard.locator("textarea").fill("It was a joke between friends, not an advertisement.");
    await reviewCard.locator("button[type=submit]").click();
    await reviewCard.locator(".appeal-state").waitFor();
    expect(await scrollsSideways(account.page)).toBe(false);
    expect(await seriousViolations(account.page)).toEqual([]);
    done(account.watch);
  });

  it("/publisher (§24): a signed-in user who is not yet a publisher registers in the page", async () => {
    const newcomer = await createUser();
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/publisher`);
    await page.fill("#sign-in-email", newcomer.email);
    await page.fill("#sign-in-password", newcomer.password);
    await page.click("button[type=submit]");
    await page.locator("#register-heading").waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.fill("#register-name", "Northwind Tools");
    await page.fill("#register-id", "northwind");
    await page.click("button:has-text('Register')");
    await page.locator("#modules-heading").waitFor();
    expect(await page.locator(".signed-in code").textContent()).toBe("northwind");
    expect(((await (await api("/developers/me", newcomer.idToken)).json()) as { publisherId: string }).publisherId).toBe("northwind");
    done(watch);
  });

  it("/docs (§24) sits inside the site: its header leads back, nothing scrolls sideways, axe-core finds nothing serious", async () => {
    for (const width of [1280, 375]) {
      const { page, watch } = await openPage(width);
      await page.goto(`${origin}/docs/`);
      await page.waitForSelector(".opblock-summary-operation-id");
      expect(await page.locator("header.site-header nav a").allTextContents()).toEqual(["Modules", "Account", "Publisher portal", "API"]);
      expect(await scrollsSideways(page)).toBe(false);
      expect(await seriousViolations(page)).toEqual([]);
      // An operation name wraps, if at all, between words: never inside one.
      const broken = await page.evaluate(`[...document.querySelectorAll(".opblock-summary-operation-id")].filter((node) => getComputedStyle(node).wordBreak === "break-all" || getComputedStyle(node).overflowWrap === "anywhere").length`);
      expect(broken).toBe(0);
      await screenshot(page, `docs-${width}`);
      await page.click("header.site-header a.brand");
      await page.waitForURL(`${origin}/`);
      done(watch);
    }
    // Two loads of the API reference (Swagger UI, the whole OpenAPI document) with axe-core each: up to 20 s on a loaded 2-core machine.
  }, 60_000);

  it("/modules/:id (§18): a user who activated the module writes a review, shown as text, and the figures move", async () => {
    const reader = await createUser({ displayName: "Rita Reader" });
    expect((await fetch(`${origin}/api/v1/modules/confirm`, { method: "POST", headers: { Authorization: `Bearer ${reader.idToken}`, "Content-Type": "application/json" }, body: JSON.stringify({ moduleId: "acme.plotter" }) })).status).toBe(200);
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/account`);
    await page.fill("#sign-in-email", reader.email);
    await page.fill("#sign-in-password", reader.password);
    await page.click("button[type=submit]");
    await page.locator("text=Signed in as").first().waitFor();
    await page.goto(`${origin}/modules/acme.plotter#reviews`);
    await page.locator("#my-review-heading").waitFor();
    await page.check("input[name=rating][value='4']");
    await page.fill("#review-title", "Handy <i>grid</i>");
    await page.fill("#review-body", "<img src=x onerror=alert(1)> Plots fast.");
    await page.click("button:has-text('Post review')");
    const review = page.locator("article.review").first();
    await expect_(async () => expect(await review.locator(".review-body").textContent()).toBe("<img src=x onerror=alert(1)> Plots fast."));
    expect(await review.locator("img").count()).toBe(0);
    expect(await review.locator("strong").textContent()).toBe("Handy <i>grid</i>");
    await expect_(async () => expect(await page.locator(".histogram tr", { hasText: "4 ★" }).locator("td").last().textContent()).toBe("1"));
    // §24: the header's rating is current too, and each review shows its stars without a count, as a verified install.
    await expect_(async () => expect(await page.locator(".module-header .stars").getAttribute("aria-label")).toBe("4 out of 5, 1 review"));
    expect(await review.locator(".stars").getAttribute("aria-label")).toBe("4 out of 5");
    expect(await review.locator(".badge").textContent()).toBe("Verified install");
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "module-reviews-375");
    const listed = (await (await api("/modules/acme.plotter/reviews")).json()) as { summary: { count: number; average: number } };
    expect(listed.summary).toMatchObject({ count: 1, average: 4 });

    // §24: back on the page, the user sees their own review to edit (Delete only now), and the stars filter the list.
    await page.reload();
    const mine = page.locator("section[aria-labelledby=my-review-heading]");
    await expect_(async () => expect(await mine.locator("strong").textContent()).toBe("Handy <i>grid</i>"));
    expect(await mine.locator("button").allTextContents()).toEqual(["Edit your review", "Delete your review"]);
    await mine.locator("button:has-text('Edit your review')").click();
    expect(await page.locator("input[name=rating][value='4']").isChecked()).toBe(true);
    expect(await page.inputValue("#review-title")).toBe("Handy <i>grid</i>");
    await page.click("button:has-text('Cancel')");
    await page.selectOption("#reviews-stars", "1");
    await expect_(async () => expect(await page.locator("section[aria-labelledby=reviews-heading]").textContent()).toContain("No 1-star reviews."));
    await page.selectOption("#reviews-stars", "4");
    await expect_(async () => expect(await page.locator("article.review").count()).toBe(1));

    // The publisher replies from the portal; the module page shows it, as text.
    const portal = await openPage();
    await portal.page.goto(`${origin}/publisher`);
    await portal.page.fill("#sign-in-email", developer.email);
    await portal.page.fill("#sign-in-password", developer.password);
    await portal.page.click("button[type=submit]");
    await portal.page.click("#tab-reviews");
    await portal.page.locator("#reviews-panel-heading").waitFor();
    await portal.page.selectOption("#reviews-module", "acme.plotter");
    // §24: the portal lists unanswered reviews first, with a reply form opened per review.
    expect(await portal.page.inputValue("#reviews-shown")).toBe("unanswered");
    const reviewed = portal.page.locator("section[aria-labelledby=reviews-panel-heading] article.review").first();
    await reviewed.locator("button:has-text('Reply')").click();
    await reviewed.locator("textarea").fill("Thanks <b>Rita</b>!");
    await reviewed.locator("button:has-text('Post reply')").click();
    await expect_(async () => expect(await reviewed.locator("[role=status]").textContent()).toBe("Reply posted."));
    expect(await reviewed.locator("button").allTextContents()).toEqual(["Edit reply", "Remove reply"]);
    expect(await seriousViolations(portal.page)).toEqual([]);
    await portal.page.reload();
    await portal.page.locator("#reviews-panel-heading").waitFor();
    await portal.page.selectOption("#reviews-module", "acme.plotter");
    await expect_(async () => expect(await portal.page.locator("section[aria-labelledby=reviews-panel-heading]").textContent()).toContain("Every review has your reply."));
    await page.reload();
    await expect_(async () => expect(await page.locator(".reply .review-body").textContent()).toBe("Thanks <b>Rita</b>!"));
    expect(await page.locator(".reply .muted").textContent()).toContain("Dev acme (the publisher) replied");
    done(watch);
    done(portal.watch);
  }, 60_000);

  /** The out-of-band codes (verification, password reset) the Auth emulator recorded for an address. */
  async function oobCodes(email: string, requestType: "VERIFY_EMAIL" | "PASSWORD_RESET") {
    const codes = (await (await fetch(`http://${process.env.FIREBASE_AUTH_EMULATOR_HOST}/emulator/v1/projects/${projectId}/oobCodes`)).json()) as { oobCodes: { email: string; requestType: string; oobLink: string }[] };
    return codes.oobCodes.filter((code) => code.email === email && code.requestType === requestType);
  }

  /** Opens the verification link the Auth emulator recorded for an address, as its owner would. */
  async function verifyEmailLink(email: string) {
    const link = (await oobCodes(email, "VERIFY_EMAIL")).at(-1);
    expect(link).toBeDefined();
    expect((await fetch(link!.oobLink)).ok).toBe(true);
  }

  const screenshot = async (page: Page, name: string) => {
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  };

  it("§24 at 375 and 1280 px: a module that fails to load offers Retry, a missing one says so, histogram bars sit on their tracks, signing in from a module returns to it, members' actions stay in their card", async () => {
    const reader = await createUser({ displayName: "Rhea Reviewer" });
    // Reviews of 5 and 2 stars: the histogram has bars of several lengths, and empty tracks.
    for (const [who, rating] of [[reader, 5], [await createUser(), 2]] as const) {
      const headers = { Authorization: `Bearer ${who.idToken}`, "Content-Type": "application/json" };
      expect((await fetch(`${origin}/api/v1/modules/confirm`, { method: "POST", headers, body: JSON.stringify({ moduleId: "acme.plotter" }) })).status).toBe(200);
      expect((await fetch(`${origin}/api/v1/modules/acme.plotter/reviews/me`, { method: "PUT", headers, body: JSON.stringify({ rating }) })).status).toBe(200);
    }
    for (const width of [375, 1280]) {
      const { page, watch } = await openPage(width);
      // The API answers 503 (to the client's own retries too) until it recovers: the page says loading failed, and Retry loads it.
      let down = true;
      await page.route("**/api/v1/modules/acme.plotter", async (route) => {
        if (down) await route.fulfill({ status: 503, contentType: "application/problem+json", body: JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, code: "unavailable", detail: "The service is busy; try again." }) });
        else await route.continue();
      });
      await page.goto(`${origin}/modules/acme.plotter`);
      const failed = page.locator(".retryable[role=alert]");
      await failed.waitFor();
      expect(await failed.textContent()).toContain("Could not load the module: The service is busy; try again.");
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `module-retry-${width}`);
      down = false;
      await failed.locator("button:has-text('Retry')").click();
      await page.locator("h1", { hasText: "Plotter" }).waitFor();

      // Each histogram bar starts where its grey track does, and sits inside it.
      await page.click("[role=tab]:has-text('Reviews')");
      await page.locator(".histogram .track").first().waitFor();
      expect(await page.locator(".histogram .track").count()).toBe(5);
      const misplaced = await page.evaluate(`[...document.querySelectorAll(".histogram .track")].filter((track) => {
        const bar = track.querySelector(".bar").getBoundingClientRect();
        const box = track.getBoundingClientRect();
        return Math.abs(bar.left - box.left) > 0.5 || bar.top < box.top - 0.5 || bar.bottom > box.bottom + 0.5;
      }).length`);
      expect(misplaced).toBe(0);
      await screenshot(page, `module-histogram-${width}`);

      // Signing in from the Reviews tab comes back to the module.
      await page.locator("section[aria-labelledby=reviews-heading] a:has-text('Sign in')").click();
      await page.waitForURL(`${origin}/account?next=%2Fmodules%2Facme.plotter`);
      await page.fill("#sign-in-email", reader.email);
      await page.fill("#sign-in-password", reader.password);
      await page.click("button[type=submit]");
      await page.waitForURL(`${origin}/modules/acme.plotter`);

      // A module that does not exist is said so, with no Retry.
      await page.goto(`${origin}/modules/acme.nothing-here`);
      await page.locator("text=There is no module 'acme.nothing-here'").waitFor();
      expect(await page.locator("button:has-text('Retry')").count()).toBe(0);
      expect(await scrollsSideways(page)).toBe(false);
      // The 503s this test answered on purpose (the first load and the client's two retries), and the 404 of the missing module, are the only ones.
      expect(watch.problems.filter((problem) => !/status of (503|404)/.test(problem))).toEqual([]);
      watch.problems = [];
      done(watch);
    }

    // An owner's members with long names: every action stays inside the card.
    const owner = await createUser({ displayName: "Wilhelmina Featherstonehaugh-Cholmondeley" });
    const members = await Promise.all([createUser({ displayName: "Bartholomew Montgomery-Worthington III" }), createUser({ displayName: "Anastasia Konstantinopoulou-Papadimitriou" })]);
    const businessId = `long-names-${owner.uid}`.toLowerCase();
    await putBusiness(businessId, { name: "Long Names Incorporated International", memberIds: [owner.uid, ...members.map((member) => member.uid)], roles: { [owner.uid]: "owner", [members[0].uid]: "admin", [members[1].uid]: "member" } });
    for (const width of [375, 1280]) {
      const { page, watch } = await openPage(width);
      await page.goto(`${origin}/account?business=${businessId}`);
      await page.fill("#sign-in-email", owner.email);
      await page.fill("#sign-in-password", owner.password);
      await page.click("button[type=submit]");
      const panel = page.locator("section.panel", { has: page.locator("h2", { hasText: "Long Names Incorporated International" }) });
      await expect_(async () => expect(await panel.locator("tbody tr").count()).toBe(3));
      const outside = await page.evaluate(`[...document.querySelectorAll("td.actions button")].filter((button) => {
        const card = button.closest("section.panel").getBoundingClientRect();
        const box = button.getBoundingClientRect();
        return box.right > card.right + 0.5 || box.left < card.left - 0.5;
      }).map((button) => button.textContent)`);
      expect(outside).toEqual([]);
      expect(await scrollsSideways(page)).toBe(false);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `account-long-names-${width}`);
      done(watch);
    }
  }, 120_000);

  it("/account and /invitations/:token (§17): an owner creates a business and invites; a newcomer makes an account, verifies it and joins", async () => {
    const owner = await createUser({ displayName: "Olive Owner" });
    const newcomer = `newcomer-${Date.now()}@example.test`;
    const { page, watch } = await openPage();
    await page.goto(`${origin}/account`);
    // Forgot password: Firebase's reset email, recorded by the Auth emulator; the page says so without telling whether the account exists.
    await page.click("button:has-text('Forgot password?')");
    await expect_(async () => expect(await page.locator("[role=alert]").textContent()).toBe("Enter your email above first: the reset link is sent there."));
    await page.fill("#sign-in-email", owner.email);
    await page.click("button:has-text('Forgot password?')");
    await expect_(async () => expect(await page.locator("[role=status]").first().textContent()).toBe(`If ${owner.email} has an account, a link to choose a new password is on its way.`));
    await expect_(async () => expect(await oobCodes(owner.email, "PASSWORD_RESET")).toHaveLength(1));
    await page.fill("#sign-in-password", owner.password);
    await page.click("button[type=submit]");
    await page.fill("#business-name", "Team <b>Acme</b>");
    await page.click("button:has-text('Create')");
    const panel = page.locator("section.panel", { has: page.locator("h2", { hasText: "Team <b>Acme</b>" }) });
    await panel.waitFor();
    await expect_(async () => expect(await panel.textContent()).toContain("No subscription yet."));
    const businessId = ((await (await api("/users/me", owner.idToken)).json()) as { businesses: { id: string }[] }).businesses[0].id;
    await panel.locator("input[type=email]").fill(newcomer);
    await panel.locator("button:has-text('Invite')").click();
    const link = panel.locator("code.wrap", { hasText: "/invitations/" });
    await link.waitFor();
    const firstPath = new URL((await link.textContent())!).pathname;
    await expect_(async () => expect(await panel.locator(".plain-list.invitations").textContent()).toContain(newcomer));
    expect(await panel.locator("tbody tr").count()).toBe(1);
    // §24: a pending invitation says who invited and when; Copy link issues a new link (tokens are kept hashed), and the first stops working.
    const pending = panel.locator(".plain-list.invitations li", { hasText: newcomer });
    expect(await pending.textContent()).toContain("Invited by Olive Owner on");
    await pending.locator("button:has-text('Copy link')").click();
    await expect_(async () => expect(new URL((await link.textContent())!).pathname).not.toBe(firstPath));
    const invitationPath = new URL((await link.textContent())!).pathname;
    expect((await api(`/invitations/${firstPath.split("/").at(-1)}`)).status).toBe(404);
    expect((await api(`/invitations/${invitationPath.split("/").at(-1)}`)).status).toBe(200);
    expect(await panel.locator(".plain-list.invitations li").count()).toBe(1);
    await screenshot(page, "account-owner");
    expect(await seriousViolations(page)).toEqual([]);

    const guest = await openPage(375);
    await guest.page.goto(`${origin}${invitationPath}`);
    await guest.page.locator("text=invited you to join").waitFor();
    expect(await guest.page.locator(".lead").textContent()).toBe("Olive Owner invited you to join Team <b>Acme</b> as a member with a seat.");
    await guest.page.click("button:has-text('Create an account')");
    await guest.page.fill("#sign-in-email", newcomer);
    await guest.page.fill("#sign-in-password", "newcomer-password");
    await guest.page.click("button[type=submit]");
    await guest.page.locator("text=Verify").first().waitFor();
    expect(await guest.page.locator("button:has-text('Accept')").isDisabled()).toBe(true);
    await screenshot(guest.page, "invitation-unverified");
    expect(await scrollsSideways(guest.page)).toBe(false);
    expect(await seriousViolations(guest.page)).toEqual([]);
    await verifyEmailLink(newcomer);
    await guest.page.click("button:has-text('I have verified it')");
    await guest.page.click("button:has-text('Accept'):not([disabled])");
    await guest.page.waitForURL(`**/account?business=${businessId}&joined=${businessId}`);
    await guest.page.getByRole("heading", { name: "Team <b>Acme</b>", exact: true }).waitFor();
    // §24: the page says whom they joined and what the seat unlocks (here: nothing yet, the business has no plan).
    await expect_(async () => expect(await guest.page.locator(".joined h2").textContent()).toBe("You joined Team <b>Acme</b>"));
    expect(await guest.page.locator(".joined").textContent()).toContain("Your seat holds no entitlements yet");
    await expect_(async () => expect(await guest.page.locator("section.panel").first().textContent()).toContain("member with a seat"));
    await screenshot(guest.page, "account-member-375");
    expect(await scrollsSideways(guest.page)).toBe(false);
    expect(await seriousViolations(guest.page)).toEqual([]);
    await guest.page.setViewportSize({ width: 1280, height: 900 });
    expect(await guest.page.locator(".joined h2").isVisible()).toBe(true);
    expect(await scrollsSideways(guest.page)).toBe(false);
    expect(await seriousViolations(guest.page)).toEqual([]);
    await screenshot(guest.page, "account-member-1280");

    // The owner sees the newcomer and takes their seat; the API agrees.
    await page.reload();
    await expect_(async () => expect(await panel.locator("tbody tr").count()).toBe(2));
    const row = panel.locator("tbody tr", { hasText: newcomer });
    // The sole owner is offered no Remove and no Leave (the service would refuse them).
    const ownerRow = panel.locator("tbody tr", { hasText: "Olive Owner" });
    expect(await ownerRow.locator("button:has-text('Remove')").count()).toBe(0);
    expect(await ownerRow.locator("select").isDisabled()).toBe(true);
    expect(await panel.textContent()).toContain("You are its only owner: to leave, make someone else owner first.");
    // Taking a seat back asks first, naming what is lost; Cancel changes nothing.
    await row.locator("button:has-text('Take the seat back')").click();
    const dialog = page.locator("dialog.confirm");
    await expect_(async () => expect(await dialog.locator("#confirm-detail").textContent()).toContain("loses what the seat grants"));
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.locator("button:has-text('Cancel')").click();
    expect(await row.textContent()).not.toContain("No seat");
    await row.locator("button:has-text('Take the seat back')").click();
    await dialog.locator("button.danger:has-text('Take the seat back')").click();
    await expect_(async () => expect(await row.textContent()).toContain("No seat"));
    const members = ((await (await api(`/businesses/${businessId}/members`, owner.idToken)).json()) as { items: { email: string; seat: boolean }[] }).items;
    expect(members.find((member) => member.email === newcomer)?.seat).toBe(false);
    await page.setViewportSize({ width: 375, height: 900 });
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "account-owner-375");
    done(watch);
    done(guest.watch);
  }, 90_000);

  it("/account (§24): a member of several businesses switches between them; an owner's plan with a Stripe customer changes seats in the Billing Portal, one without says who manages it", async () => {
    const owner = await createUser({ displayName: "Sam Switch" });
    const { db } = await testDeps();
    const [paid, managed] = [`paid-${owner.uid}`.toLowerCase(), `managed-${owner.uid}`.toLowerCase()];
    await putBusiness(paid, { name: "Paid Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    await db.collection("businesses").doc(paid).update({ stripeCustomerId: "cus_switch" });
    await putBusiness(managed, { name: "Managed Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    for (const id of [paid, managed]) await putSubscription(id, { status: "active", seats: 5, currentPeriodEnd: daysFromNow(20), entitlements: ["pro"] });
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/account`);
    await page.fill("#sign-in-email", owner.email);
    await page.fill("#sign-in-password", owner.password);
    await page.click("button[type=submit]");
    await page.locator("#business-switcher").waitFor();
    expect(await page.locator("#business-switcher option").allTextContents()).toEqual(expect.arrayContaining(["Paid Co (owner)", "Managed Co (owner)"]));
    await page.selectOption("#business-switcher", managed);
    await expect_(async () => expect(await page.locator("section.panel h2").first().textContent()).toBe("Managed Co"));
    expect(new URL(page.url()).searchParams.get("business")).toBe(managed);
    expect(await page.locator("section.panel").first().textContent()).toContain("This plan is managed by the marketplace's operators");
    expect(await page.locator("button:has-text('Change seats')").count()).toBe(0);
    // The members table is stacked rows at 375 px: its actions are on screen.
    const action = page.locator("td.actions button").first();
    const box = (await action.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(375);
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "account-switcher-375");
    await page.selectOption("#business-switcher", paid);
    await page.click("button:has-text('Change seats')");
    await page.waitForURL(`${stripe.url}/portal/**`);
    // The local Stripe's portal is the one page outside the site, on purpose.
    watch.outside = watch.outside.filter((url) => !url.startsWith(`${stripe.url}/`));
    done(watch);
  }, 60_000);

  it("/account (§21): an owner adds a webhook endpoint, copies its secret once, sends a test and sees it delivered, rotates and deletes it, each asked first", async () => {
    const receiver = await startReceiver();
    afterAllStops.push(receiver.stop);
    const owner = await createUser({ displayName: "Hook Owner" });
    const businessId = `hooks-${owner.uid}`.toLowerCase();
    await putBusiness(businessId, { name: "Hooks Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/account`);
    await page.fill("#sign-in-email", owner.email);
    await page.fill("#sign-in-password", owner.password);
    await page.click("button[type=submit]");
    const panel = page.locator(`section[aria-labelledby=webhooks-${businessId}]`);
    await panel.waitFor();
    await expect_(async () => expect(await panel.textContent()).toContain("No endpoints yet."));
    await panel.locator("input[type=url]").fill(`${receiver.origin}/account-hook`);
    await panel.locator("input[value='webhook.test']").check();
    await panel.locator("input[value='business.member.joined']").check();
    await panel.locator("button:has-text('Add endpoint')").click();
    const secret = panel.locator(".secret-once code");
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_/);
    expect(await panel.locator(".secret-once button:has-text('Copy')").count()).toBe(1);
    await panel.locator("button:has-text('Send a test')").click();
    await expect_(async () => expect(receiver.at("/account-hook")).toHaveLength(1));
    const delivered = receiver.at("/account-hook")[0];
    expect(new Webhook((await secret.textContent())!).verify(delivered.body, delivered.headers as Record<string, string>)).toMatchObject({ type: "webhook.test" });
    await panel.locator("button:has-text('Deliveries')").click();
    await expect_(async () => expect(await panel.locator(".deliveries li").first().textContent()).toContain("succeeded"));
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "account-webhooks-375");
    const first = await secret.textContent();
    await panel.locator(".endpoint > .button-row button:has-text('Rotate secret')").click();
    expect(await page.locator("dialog.confirm #confirm-title").textContent()).toBe(`Rotate the secret of ${receiver.origin}/account-hook?`);
    await page.locator("dialog.confirm[open] button.danger").click();
    await expect_(async () => expect(await panel.locator(".secret-once code").textContent()).not.toBe(first));
    await panel.locator(".endpoint > .button-row button.danger").click();
    expect(await page.locator("dialog.confirm[open] #confirm-title").textContent()).toBe(`Delete the endpoint ${receiver.origin}/account-hook?`);
    await page.locator("dialog.confirm[open] button.danger").click();
    await expect_(async () => expect(await panel.textContent()).toContain("No endpoints yet."));
    done(watch);
  }, 60_000);

  it("/account (§22): an owner verifies a domain by its TXT record, sets single sign-on, makes a SCIM token shown once, sees SCIM's suspended member, and revokes the token", async () => {
    const owner = await createUser({ displayName: "Idp Owner" });
    const businessId = `idp-${owner.uid}`.toLowerCase();
    await putBusiness(businessId, { name: "Idp Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/account`);
    await page.fill("#sign-in-email", owner.email);
    await page.fill("#sign-in-password", owner.password);
    await page.click("button[type=submit]");
    const panel = page.locator(`section[aria-labelledby=enterprise-${businessId}]`);
    await panel.waitFor();

    await panel.locator(`#domain-${businessId}`).fill("web-idp.test");
    await panel.locator("button:has-text('Add domain')").click();
    const txtValue = panel.locator(".domains code").nth(1);
    await txtValue.waitFor();
    await panel.locator("button:has-text('Verify')").click();
    await expect_(async () => expect(await panel.locator("[role=alert]").textContent()).toContain("No TXT record"));
    dns.set("_marketplace-verification.web-idp.test", "TXT", [(await txtValue.textContent())!]);
    await panel.locator("button:has-text('Verify')").click();
    await expect_(async () => expect(await panel.locator(".domains").textContent()).toContain("Verified"));

    await panel.locator(`#sso-provider-${businessId}`).fill("saml.webidp");
    await panel.locator(`#sso-jit-${businessId}`).check();
    await panel.locator("button:has-text('Save single sign-on')").click();
    await expect_(async () => expect(await panel.textContent()).toContain("Single sign-on through saml.webidp saved."));

    await panel.locator(`#scim-token-${businessId}`).fill("Okta");
    await panel.locator("button:has-text('Create token')").click();
    const token = panel.locator(".secret-once code");
    await token.waitFor();
    const scimToken = (await token.textContent())!;
    expect(scimToken).toMatch(/^scim_/);
    const scim = (pathname: string, init: RequestInit = {}) =>
      fetch(`${origin}/api/v1/scim/v2${pathname}`, { ...init, headers: { Authorization: `Bearer ${scimToken}`, "Content-Type": "application/scim+json" } });
    const created = (await (await scim("/Users", { method: "POST", body: JSON.stringify({ userName: "ida@web-idp.test", displayName: "Ida" }) })).json()) as { id: string };
    expect((await scim(`/Users/${created.id}`, { method: "PATCH", body: JSON.stringify({ Operations: [{ op: "replace", value: { active: false } }] }) })).status).toBe(200);
    await page.reload();
    const row = page.locator("tr", { hasText: "Ida" });
    await row.waitFor();
    expect(await row.locator(".badge").allTextContents()).toEqual(["SCIM", "Suspended"]);
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "account-enterprise-375");

    await panel.locator(".scim-tokens button:has-text('Revoke')").click();
    expect(await page.locator("dialog.confirm[open] #confirm-title").textContent()).toBe("Revoke the SCIM token Okta?");
    await page.locator("dialog.confirm[open] button.danger").click();
    await expect_(async () => expect(await panel.locator(".scim-tokens").count()).toBe(0));
    expect((await scim("/Users")).status).toBe(401);
    done(watch);
  }, 60_000);

  it("/account, / and /modules/:id (§26): an owner sets the install policy and checks a module, claims the company's publisher id; a member sees the block and the company's own module", async () => {
    const owner = await createUser({ displayName: "Cat Owner" });
    const member = await createUser({ displayName: "Cat Member" });
    const businessId = `cat-${owner.uid}`.toLowerCase();
    const publisherId = `cat${owner.uid.slice(0, 8)}`.toLowerCase().replace(/[^a-z0-9]/g, "x");
    const author = await createDeveloper(`cat-dev-${owner.uid.slice(0, 6)}`.toLowerCase().replace(/[^a-z0-9-]/g, "x"));
    await putBusiness(businessId, { name: "Catalog Co", memberIds: [owner.uid, member.uid, author.uid], roles: { [owner.uid]: "owner", [author.uid]: "admin" } });
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/account`);
    await page.fill("#sign-in-email", owner.email);
    await page.fill("#sign-in-password", owner.password);
    await page.click("button[type=submit]");
    const section = page.locator(`section[aria-labelledby=modules-${businessId}]`);
    await section.waitFor();

    await section.locator(`#rule-module-${businessId}`).fill("acme.plotter");
    await section.locator(`#rule-versions-${businessId}`).fill(">=1.1.0");
    await section.locator(`#rule-reason-${businessId}`).fill("Plotter 1.1 breaks our reports.");
    await section.locator("button:has-text('Add rule')").click();
    await section.locator("button:has-text('Save policy')").click();
    await expect_(async () => expect(await section.textContent()).toContain("Saved version 1 of Catalog Co's install policy"));
    await section.locator(`#check-module-${businessId}`).fill("acme.plotter");
    await section.locator("button:has-text('Check')").click();
    await expect_(async () => expect(await section.locator("p.message[role=status]").last().textContent()).toBe("Allowed: acme.plotter 1.0.0, by the open mode."));
    await section.locator(`#check-version-${businessId}`).fill("1.1.0");
    await section.locator("button:has-text('Check')").click();
    await expect_(async () => expect(await section.locator("p.message[role=status]").last().textContent()).toContain('Not allowed: acme.plotter 1.1.0, by "Block acme.plotter >=1.1.0". Plotter 1.1 breaks our reports.'));
    // Removing a rule asks first, naming it; cancelled, nothing changes.
    await section.locator(".policy-rules button:has-text('Remove')").click();
    expect(await page.locator("dialog.confirm[open] #confirm-title").textContent()).toBe('Remove "Block acme.plotter >=1.1.0"?');
    await page.locator("dialog.confirm[open] button.secondary").click();
    expect(await section.locator(".policy-rules li").count()).toBe(1);

    await section.locator(`#publisher-${businessId}`).fill(publisherId);
    await section.locator("button:has-text('Claim')").click();
    await expect_(async () => expect(await section.textContent()).toContain(`Private modules publish as ${publisherId}`));
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "account-modules-375");
    done(watch);

    await publishModule(author, { id: `${publisherId}.handbook`, name: "Catalog Handbook", summary: "How Catalog Co works.", version: "1.0.0" });
    const seen = await openPage(375);
    await seen.page.goto(`${origin}/account`);
    await seen.page.fill("#sign-in-email", member.email);
    await seen.page.fill("#sign-in-password", member.password);
    await seen.page.click("button[type=submit]");
    await seen.page.locator("section.panel h2").first().waitFor();
    await seen.page.goto(`${origin}/modules/acme.plotter`);
    const blocked = seen.page.locator(".blocked-notice");
    await blocked.waitFor();
    expect(await blocked.textContent()).toBe("Blocked by Catalog Co: Plotter 1.1 breaks our reports.");
    expect(await seen.page.locator("a.button:has-text('Install')").count()).toBe(0);
    await screenshot(seen.page, "module-blocked-375");

    await seen.page.goto(`${origin}/?business=${businessId}`);
    const card = seen.page.locator(".card", { hasText: "Catalog Handbook" });
    await card.waitFor();
    expect(await card.locator(".badge").allTextContents()).toContain("Your company's");
    expect(await seen.page.locator("#search-catalog").inputValue()).toBe(businessId);
    expect(await scrollsSideways(seen.page)).toBe(false);
    expect(await seriousViolations(seen.page)).toEqual([]);
    await screenshot(seen.page, "marketplace-company-375");
    await seen.page.goto(`${origin}/?business=${businessId}&q=plotter`);
    const plotter = seen.page.locator(".card", { hasText: "Plotter" });
    await plotter.waitFor();
    expect(await plotter.locator(".badge").allTextContents()).toContain("Blocked by your company");
    expect(await scrollsSideways(seen.page)).toBe(false);
    expect(await seriousViolations(seen.page)).toEqual([]);
    await screenshot(seen.page, "marketplace-company-blocked-375");
    done(seen.watch);

    // To anyone else the company's module does not exist.
    const visitor = await openPage(375);
    await visitor.page.goto(`${origin}/modules/${publisherId}.handbook`);
    await expect_(async () => expect(await visitor.page.locator(".message.error").textContent()).toContain(`There is no module '${publisherId}.handbook'`));
  }, 90_000);

  it("/publisher (§28): the portal's sections are tabs; Analytics opens on a row of totals with their change and one chart of the metric picked, with its numbers, the funnel, splits, ranges and CSV", async () => {
    const seller = await createDeveloper("tailspin");
    await publishModule(seller, { id: "tailspin.flights", name: "Tailspin Flights", summary: "Flight plans for every trip.", version: "1.0.0" });
    const post = (pathname: string, token: string | null, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${origin}/api/v1${pathname}`, { method: "POST", headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers }, body: JSON.stringify(body) });
    for (const agent of ["visitor-a", "visitor-b", "visitor-c", "visitor-d"]) expect((await post("/modules/tailspin.flights/views", null, {}, { "User-Agent": `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 ${agent}` })).status).toBe(204);
    const [ann, bob] = await Promise.all([createUser(), createUser()]);
    expect((await post("/modules/confirm", ann.idToken, { moduleId: "tailspin.flights", deviceId: "ann-pc", platform: "win32" })).status).toBe(200);
    expect((await post("/modules/confirm", bob.idToken, { moduleId: "tailspin.flights", deviceId: "bob-mac", platform: "darwin" })).status).toBe(200);
    expect((await api("/modules/download/tailspin.flights", ann.idToken)).status).toBe(200);
    await drainDownloadCounters();
    // The module page counts its own view, once per visitor and day: a reload is the same visitor (its __session cookie).
    const visitorContext = await browser.newContext({ userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36" });
    const visitor = await visitorContext.newPage();
    for (let visit = 0; visit < 2; visit += 1) {
      const counted = visitor.waitForResponse((answer) => answer.url().endsWith("/api/v1/modules/tailspin.flights/views"));
      await visitor.goto(`${origin}/modules/tailspin.flights`);
      expect((await counted).status()).toBe(204);
    }
    expect((await visitorContext.cookies()).map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite])).toEqual([["__session", true, "Lax"]]);
    await visitorContext.close();
    // What was counted, folded as the deployment's metricFold does every minute.
    await foldCounts();

    for (const width of [375, 1280]) {
      const { page, watch } = await openPage(width);
      // The Analytics tab has an address of its own: signing in there lands on it.
      await page.goto(`${origin}/publisher#analytics`);
      await page.fill("#sign-in-email", seller.email);
      await page.fill("#sign-in-password", seller.password);
      await page.click("button[type=submit]");
      await page.locator("#analytics-heading").waitFor();
      expect(await page.locator("[role=tab][aria-selected=true]").textContent()).toBe("Analytics");
      expect(await page.locator("#modules-heading").count()).toBe(0);
      // The totals row: every metric with its total and its change against the 30 days before (none then: new); one chart, of downloads.
      await expect_(async () => expect(await page.locator(".metric-total").count()).toBe(11));
      const total = (metric: string) => page.locator(`.metric-total[data-metric=${metric}]`);
      expect(await total("installs").locator(".metric-value").textContent()).toBe("2");
      expect(await total("installs").locator(".metric-change").textContent()).toBe("new against the 30 days before");
      expect(await total("refunds").locator(".metric-change").textContent()).toBe("0 % against the 30 days before");
      expect(await total("downloads").getAttribute("aria-pressed")).toBe("true");
      await expect_(async () => expect(await page.locator(".analytics .metric-chart canvas").count()).toBe(1));
      expect(await page.locator(".metric-chart").getAttribute("data-metric")).toBe("downloads");
      expect((await page.locator(".funnel").textContent())!.replace(/\s+/g, " ")).toBe("5 page views2 installs (40.0 % of page views)0 purchases (0.0 % of installs)");
      await total("installs").click();
      await expect_(async () => expect(await page.locator(".metric-chart").getAttribute("data-metric")).toBe("installs"));
      expect(await page.locator(".metric-chart[data-metric=installs] figcaption").textContent()).toMatch(/^Installs from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}: in all 2\.$/);
      // The table alternative holds the same numbers.
      await total("pageViews").click();
      await page.click(".metric-chart[data-metric=pageViews] summary");
      const lastRow = page.locator(".metric-chart[data-metric=pageViews] tbody tr").last();
      expect(await lastRow.locator("td").allTextContents()).toEqual(["5"]);
      await total("installs").click();
      await page.selectOption("#analytics-split", "platform");
      await page.click(".metric-chart[data-metric=installs] summary");
      await expect_(async () => expect(await page.locator(".metric-chart[data-metric=installs] thead th").allTextContents()).toEqual(["Day", "darwin", "win32"]));
      await page.click(".range-choice:has-text('12 months')");
      await page.click(".metric-chart[data-metric=installs] summary");
      await expect_(async () => expect(await page.locator(".metric-chart[data-metric=installs] thead th").first().textContent()).toBe("Week of"));
      expect(await total("installs").locator(".metric-change").textContent()).toBe("new against the 12 months before");
      expect(await page.locator(".range-choice[aria-pressed=true]").textContent()).toBe("12 months");
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("button:has-text('Export CSV')")]);
      const csv = readFileSync((await download.path())!, "utf8");
      expect(csv.split("\r\n")[0]).toMatch(/^date,platform,downloads,installs,/);
      expect(download.suggestedFilename()).toMatch(/^all-modules-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
      expect(await scrollsSideways(page)).toBe(false);
      expect(await seriousViolations(page)).toEqual([]);
      await page.locator("#analytics-heading").scrollIntoViewIfNeeded();
      await screenshot(page, `publisher-analytics-${width}`);
      done(watch);
    }
  }, 90_000);

  it("/publisher, /modules/:id and /account (§27): a publisher promises a perpetual fallback; a subscriber whose year lapsed sees what stays theirs, with Renew", async () => {
    const seller = await createDeveloper("contoso");
    await declareTrader(seller);
    await publishModule(seller, { id: "contoso.gauges", name: "Contoso Gauges", summary: "Gauges for a year or for good.", version: "1.0.0" });
    const opened = (await (await fetch(`${origin}/api/v1/developers/payouts/account`, { method: "POST", headers: { Authorization: `Bearer ${seller.idToken}` } })).json()) as { onboardingUrl: string };
    expect((await fetch(`${opened.onboardingUrl}/complete`, { method: "POST", redirect: "manual" })).status).toBe(303);

    const { page, watch } = await openPage(1280);
    await page.goto(`${origin}/publisher`);
    await page.fill("#sign-in-email", seller.email);
    await page.fill("#sign-in-password", seller.password);
    await page.click("button[type=submit]");
    await page.click("#tab-payouts");
    await page.selectOption("#pricing-module", "contoso.gauges");
    await page.selectOption("#pricing-model", "subscription");
    await page.selectOption("#pricing-interval", "year");
    await page.fill("#pricing-amount", "90.00");
    expect(await page.locator("#pricing-fallback-help").textContent()).toContain("keeps, when the subscription ends, the versions you had published by the start of that year");
    await page.check("input[name=fallback]");
    await page.click("button:has-text('Save price')");
    await expect_(async () => expect(await page.locator("[role=status]").filter({ hasText: "now costs" }).textContent()).toBe("contoso.gauges now costs $90.00 a year · yours to keep after a year."));
    expect(((await (await api("/modules/contoso.gauges")).json()) as { price: { fallback: string } }).price.fallback).toBe("perpetual");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "publisher-pricing-fallback-1280");
    done(watch);

    // A year bought, then canceled at Stripe: 1.0.0 stays the buyer's.
    const buyer = await createUser();
    const checkout = (await (await fetch(`${origin}/api/v1/modules/contoso.gauges/checkout`, { method: "POST", headers: { Authorization: `Bearer ${buyer.idToken}`, "Content-Type": "application/json" }, body: "{}" })).json()) as { url: string };
    expect((await fetch(`${checkout.url}/pay`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" })).status).toBe(303);
    const subscription = stripe.events.filter((event) => event.type === "customer.subscription.created").at(-1)!.data.object.id;
    expect((await fetch(`${stripe.url}/v1/subscriptions/${subscription}`, { method: "DELETE", headers: { Authorization: "Bearer sk_test_local" } })).status).toBe(200);

    for (const width of [375, 1280]) {
      const visit = await openPage(width);
      await visit.page.goto(`${origin}/account`);
      await visit.page.fill("#sign-in-email", buyer.email);
      await visit.page.fill("#sign-in-password", buyer.password);
      await visit.page.click("button[type=submit]");
      const licence = visit.page.locator("[aria-labelledby=licences-heading] li", { hasText: "contoso.gauges" });
      await expect_(async () => expect(await licence.textContent()).toContain("Yours to keep: versions up to 1.0.0"));
      expect(await licence.locator("a.button").textContent()).toBe("Renew");
      expect(await scrollsSideways(visit.page)).toBe(false);
      expect(await seriousViolations(visit.page)).toEqual([]);
      await screenshot(visit.page, `account-licences-${width}`);
      await licence.locator("a.button").click();
      await visit.page.waitForURL(`${origin}/modules/contoso.gauges`);
      await expect_(async () => expect(await visit.page.locator(".purchase .kept").textContent()).toBe("Yours to keep: versions up to 1.0.0. Renew for newer versions."));
      expect(await visit.page.locator(".purchase .price").textContent()).toBe("$90.00 a year · yours to keep after a year");
      expect(await visit.page.locator(".purchase button", { hasText: "Renew" }).count()).toBe(1);
      expect(await scrollsSideways(visit.page)).toBe(false);
      expect(await seriousViolations(visit.page)).toEqual([]);
      await screenshot(visit.page, `module-fallback-${width}`);
      done(visit.watch);
    }
  }, 90_000);

  it("/publisher and /modules/:id (§20): a publisher onboards and prices, a buyer buys and owns it, and the earnings count the sale", async () => {
    const seller = await createDeveloper("fabrikam");
    await publishModule(seller, { id: "fabrikam.charts", name: "Fabrikam Charts", summary: "Charts worth paying for.", version: "1.0.0" });
    const { page, watch } = await openPage(375);
    await page.goto(`${origin}/publisher`);
    await page.fill("#sign-in-email", seller.email);
    await page.fill("#sign-in-password", seller.password);
    await page.click("button[type=submit]");
    await page.click("#tab-payouts");
    await page.click("button:has-text('Set up payouts')");
    // Stripe's onboarding (the local one): back to the portal once done.
    await page.waitForURL(`${stripe.url}/onboarding/**`);
    await page.click("button:has-text('Complete onboarding')");
    await page.waitForURL(`${origin}/publisher?payouts=return`);
    await expect_(async () => expect(await page.locator("#payouts-heading + p").textContent()).toContain("Can sell"));
    // Who sells (§30): prices wait for the trader declaration, made beside the payouts.
    expect(await page.locator("#pricing-module").count()).toBe(0);
    await page.fill("#trader-name", "Fabrikam Software GmbH");
    await page.fill("#trader-address", "Fabrikstraße 1, 10115 Berlin, Germany");
    await page.fill("#trader-email", "sales@fabrikam.example");
    await page.fill("#trader-phone", "+49 30 7654321");
    await page.check("input[name=selfCertification]");
    await page.click("button:has-text('Save declaration')");
    await expect_(async () => expect(await page.locator("[role=status]").filter({ hasText: "Declaration saved" }).count()).toBe(1));
    await page.selectOption("#pricing-module", "fabrikam.charts");
    await page.fill("#pricing-amount", "9.00");
    await page.click("button:has-text('Save price')");
    await expect_(async () => expect(await page.locator("[role=status]").filter({ hasText: "now costs" }).textContent()).toBe("fabrikam.charts now costs $9.00."));
    expect(((await (await api("/modules/fabrikam.charts")).json()) as { price: unknown }).price).toEqual({ model: "one_time", amount: 900, currency: "usd", interval: null, trialDays: 0, perSeat: false, fallback: "none" });
    expect(await scrollsSideways(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "publisher-payouts-375");

    const buyer = await createUser();
    const shopper = await openPage(375);
    await shopper.page.goto(`${origin}/modules/fabrikam.charts`);
    await shopper.page.locator(".purchase .price").waitFor();
    expect(await shopper.page.locator(".purchase .price").textContent()).toBe("$9.00");
    // Who sells it, as declared (§30, Art. 31).
    expect((await shopper.page.locator("section.trader address").textContent())?.replace(/\s+/g, " ")).toBe("Fabrikam Software GmbHFabrikstraße 1, 10115 Berlin, Germanysales@fabrikam.example · +49 30 7654321");
    expect(await scrollsSideways(shopper.page)).toBe(false);
    expect(await seriousViolations(shopper.page)).toEqual([]);
    await screenshot(shopper.page, "module-trader-375");
    await shopper.page.click("a:has-text('Sign in to buy')");
    await shopper.page.fill("#sign-in-email", buyer.email);
    await shopper.page.fill("#sign-in-password", buyer.password);
    await shopper.page.click("button[type=submit]");
    // Signing in from a module page returns to it.
    await shopper.page.waitForURL(`${origin}/modules/fabrikam.charts`);
    await shopper.page.click(".purchase button:has-text('Buy')");
    await shopper.page.waitForURL(`${stripe.url}/checkout/**`);
    expect(await shopper.page.locator("dl").textContent()).toContain("Marketplace fee1.35 USD");
    await shopper.page.click("button:has-text('Pay')");
    await shopper.page.waitForURL(`${origin}/modules/fabrikam.charts?checkout=success`);
    await expect_(async () => expect(await shopper.page.locator(".purchase .badge").textContent()).toBe("Owned"));
    expect((await api("/modules/download/fabrikam.charts", buyer.idToken)).status).toBe(200);
    expect(await scrollsSideways(shopper.page)).toBe(false);
    expect(await seriousViolations(shopper.page)).toEqual([]);
    await screenshot(shopper.page, "module-owned-375");

    await page.reload();
    const earnings = page.locator("[role=region][aria-labelledby=earnings-heading] tbody tr", { hasText: "fabrikam.charts" });
    await expect_(async () => expect(await earnings.locator("td").allTextContents()).toEqual(["1", "$9.00", "$1.35", "$0.00", "$7.65"]));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "publisher-earnings-375");
    // A subscription with a trial tells an anonymous visitor what signing in gets them (§24).
    await publishModule(seller, { id: "fabrikam.maps", name: "Fabrikam Maps", summary: "Maps by the month.", version: "1.0.0" });
    const trial = await fetch(`${origin}/api/v1/developers/modules/fabrikam.maps/pricing`, { method: "PUT", headers: { Authorization: `Bearer ${seller.idToken}`, "Content-Type": "application/json" }, body: JSON.stringify({ model: "subscription", amount: 500, interval: "month", trialDays: 7 }) });
    expect(trial.status).toBe(200);
    for (const width of [375, 1280]) {
      const visitor = await openPage(width);
      await visitor.page.goto(`${origin}/modules/fabrikam.maps`);
      await visitor.page.locator(".purchase .price").waitFor();
      expect(await visitor.page.locator(".purchase a.button").textContent()).toBe("Sign in to start a 7-day trial");
      expect(await visitor.page.locator(".purchase a.button").getAttribute("href")).toBe("/account?next=%2Fmodules%2Ffabrikam.maps");
      expect(await scrollsSideways(visitor.page)).toBe(false);
      expect(await seriousViolations(visitor.page)).toEqual([]);
      await screenshot(visitor.page, `module-trial-anonymous-${width}`);
      done(visitor.watch);
    }
    // Only the local Stripe's own pages were visited outside the site, on purpose.
    for (const visited of [watch, shopper.watch]) visited.outside = visited.outside.filter((url) => !url.startsWith(`${stripe.url}/`));
    done(watch);
    done(shopper.watch);
  }, 90_000);
});

/** Retries an assertion for a few seconds: what a page shows arrives after its requests. */
const expect_ = (check: () => Promise<void>, timeoutMs = 10_000) => eventually(check, timeoutMs);
