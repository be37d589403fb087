import request from "supertest";
import type { Express } from "express";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, eventually, expectProblem, otherInstanceApp, publishModule, resetEmulators, testApp, type TestDeveloper, type TestUser } from "./support/harness";

/** Contract §18: search, filters, sorts, facets, and their freshness on every instance. */

const api = "/api/v1";
type Item = { id: string; tags: string[]; category: string | null; publisherId: string; entitlement: string | null; price: object | null; rating: { average: number; count: number } | null };

const CATALOG = [
  { id: "contoso.charts", name: "Charts Pro", summary: "Bar, line and pie charts for your data.", description: "Plot tables as graphs and dashboards.", category: "data", tags: ["charts", "plot", "graphs"], entitlement: "pro" },
  { id: "contoso.notes", name: "Sticky Notes", summary: "Quick notes on your desktop.", category: "productivity", tags: ["notes", "todo"] },
  { id: "contoso.chart-kit", name: "Chart Kit", summary: "Chart widgets for reports.", category: "data", tags: ["charts"] },
  { id: "fabrikam.plotter", name: "Plotter", summary: "Plots points on a grid.", category: "data", tags: ["plot"], entitlement: "pro" },
  { id: "fabrikam.maps", name: "Maps", summary: "Offline maps of your city.", category: "outdoors", tags: ["maps", "travel"] },
  { id: "fabrikam.timer", name: "Focus Timer", summary: "Pomodoro timer with charts of your day.", category: "productivity", tags: ["todo", "timer"] },
];

describe("search, filters, sorts and facets (§18)", () => {
  let app: Express;
  let contoso: TestDeveloper;
  let fabrikam: TestDeveloper;

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp();
    contoso = await createDeveloper("contoso");
    fabrikam = await createDeveloper("fabrikam");
    for (const module of CATALOG) await publishModule(module.id.startsWith("contoso") ? contoso : fabrikam, { version: "1.0.0", ...module });
  }, 60_000);

  const list = async (query: string, on: Express = app) => {
    const response = await request(on).get(`${api}/modules?${query}`);
    expect(response.status).toBe(200);
    return response.body as { items: Item[]; nextCursor: string | null; total: number; suggestion?: string | null; facets?: Record<string, { value: string; count: number }[]> };
  };
  const ids = async (query: string) => (await list(query)).items.map((item) => item.id);

  it("finds a module from a phrase, a typo or its name in any case", async () => {
    expect(await ids("q=chart%20plot")).toEqual(["contoso.charts"]);
    expect((await ids("q=chrts"))[0]).toBe("contoso.charts");
    expect((await ids("q=Charts%20Pro"))[0]).toBe("contoso.charts");
    expect((await ids("q=chart%20kit"))[0]).toBe("contoso.chart-kit");
    expect(await ids("q=pomodoro%20charts")).toEqual(["fabrikam.timer"]);
    expect(await ids("q=fabrikam%20offline")).toEqual(["fabrikam.maps"]);
    expect(await ids("q=zzzz")).toEqual([]);
    expect((await list("q=chart")).items[0]).toMatchObject({ tags: expect.any(Array), rating: null });
  });

  it("agrees with itself page by page: every sort and filter, pages of 2, against the whole result and its facets", async () => {
    const queries = ["", "q=charts", "category=data", "pricing=paid", "pricing=free&sort=name", "tag=todo", "publisher=fabrikam&sort=downloads", "q=chart&category=data&sort=rating", "sort=updated"];
    for (const query of queries) {
      const whole = await list(`${query}&limit=100&facets=true`);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await list(`${query}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(page.items.length).toBeLessThanOrEqual(2);
        paged.push(...page.items.map((item) => item.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect({ query, paged }).toEqual({ query, paged: whole.items.map((item) => item.id) });
      expect(whole.total).toBe(whole.items.length);
      // A facet's counts are over the result without that facet's own filter (§24): the values
      // beside a chosen one stay in view, each with what choosing it as well would add.
      const asObject = (facet: { value: string; count: number }[]) => Object.fromEntries(facet.map(({ value, count }) => [value, count]));
      const facetValues: [keyof NonNullable<typeof whole.facets>, (item: Item) => string[]][] = [
        ["category", (item) => (item.category ? [item.category] : [])],
        ["tag", (item) => item.tags],
        ["publisher", (item) => [item.publisherId]],
        ["pricing", (item) => [item.entitlement || item.price ? "paid" : "free"]],
      ];
      for (const [facet, values] of facetValues) {
        const params = new URLSearchParams(query);
        params.delete(facet);
        const over = (await list(`${params}&limit=100`)).items;
        const counts = new Map<string, number>();
        for (const item of over) for (const key of values(item)) counts.set(key, (counts.get(key) ?? 0) + 1);
        expect({ query, facet, counts: asObject(whole.facets![facet]) }).toEqual({ query, facet, counts: Object.fromEntries(counts) });
      }
    }
    expect(await ids("category=data&sort=name")).toEqual(["contoso.chart-kit", "contoso.charts", "fabrikam.plotter"]);
    expect(await ids("pricing=paid&sort=name")).toEqual(["contoso.charts", "fabrikam.plotter"]);
    expect((await list("q=charts")).facets).toBeUndefined();
  });

  it("counts the whole result, takes several values of a facet, forgives a swap and suggests a spelling (§24)", async () => {
    const all = await list("limit=2");
    expect({ shown: all.items.length, total: all.total }).toEqual({ shown: 2, total: CATALOG.length });
    expect(await ids("category=data,outdoors&sort=name")).toEqual(["contoso.chart-kit", "contoso.charts", "fabrikam.maps", "fabrikam.plotter"]);
    expect(await ids("category=data,outdoors&publisher=fabrikam&sort=name")).toEqual(["fabrikam.maps", "fabrikam.plotter"]);
    expect(await ids("tag=timer,maps&sort=name")).toEqual(["fabrikam.timer", "fabrikam.maps"]);
    expect(await ids("q=chrat&sort=name")).toEqual(["contoso.chart-kit", "contoso.charts", "fabrikam.timer"]);
    // Two edits in six letters are more than search forgives, not more than a suggestion does.
    const missed = await list("q=pxmodorx%20chxrtz");
    expect(missed).toMatchObject({ items: [], total: 0, suggestion: expect.stringMatching(/^pomodoro charts?$/) });
    expect(await ids(`q=${encodeURIComponent(missed.suggestion!)}`)).toEqual(["fabrikam.timer"]);
    expect((await list("q=qqqqqqqq")).suggestion).toBeNull();
    expect(await list("category=data")).not.toHaveProperty("suggestion");
  });

  it("refuses a cursor of another sort, and bad parameters, with 400", async () => {
    const first = await list("sort=name&limit=1");
    expectProblem(await request(app).get(`${api}/modules?sort=updated&cursor=${encodeURIComponent(first.nextCursor!)}`), 400, "invalid_request");
    for (const query of ["sort=best", "pricing=cheap", "facets=yes", `q=${"x".repeat(201)}`, "tag=" + "t".repeat(25), "category=data,,maps", "category=", `tag=${Array.from({ length: 21 }, (_, i) => `t${i}`).join(",")}`]) {
      expectProblem(await request(app).get(`${api}/modules?${query}`), 400, "invalid_request");
    }
  });

  it("shows a publish on another instance within 2 s, and a yank takes the module out", async () => {
    const other = await otherInstanceApp();
    expect((await list("q=weather", other)).items).toEqual([]);
    await publishModule(fabrikam, { id: "fabrikam.weather", name: "Weather", version: "1.0.0", summary: "Forecasts for your city.", tags: ["weather"] });
    expect(await ids("q=weather")).toEqual(["fabrikam.weather"]);
    await eventually(async () => expect((await list("q=forecast", other)).items.map((item) => item.id)).toEqual(["fabrikam.weather"]));
    const yanked = await request(app).post(`${api}/developers/modules/yank`).set(bearer(fabrikam)).send({ moduleId: "fabrikam.weather", version: "1.0.0", reason: "Wrong city" });
    expect(yanked.status).toBe(200);
    await eventually(async () => expect((await list("q=weather", other)).items).toEqual([]));
  });

  it("refuses tags that are not 2-24 lower-case letters, digits or '-', more than 10, or repeated, with 422", async () => {
    for (const tags of [["UPPER"], ["a"], ["x".repeat(25)], Array.from({ length: 11 }, (_, i) => `tag${i}`), ["same", "same"], "charts"]) {
      const bytes = await modulePackage({ id: "contoso.tagged", name: "Tagged", version: "1.0.0", summary: "Tags.", tags }, []);
      expectProblem(await request(app).post(`${api}/developers/modules/sign`).set(bearer(contoso)).set("Content-Type", "application/octet-stream").send(bytes), 422, "invalid_package");
    }
  });
});

describe("ratings and reviews (§18)", () => {
  let app: Express;
  let owner: TestDeveloper;
  beforeAll(async () => {
    await resetEmulators();
    app = await testApp();
    owner = await createDeveloper("acme");
    await publishModule(owner, { id: "acme.charts", name: "Charts", version: "1.0.0", summary: "Charts." });
    await publishModule(owner, { id: "acme.other", name: "Other", version: "1.0.0", summary: "Other." });
  }, 60_000);

  const activate = (user: TestUser, moduleId = "acme.charts") => request(app).post(`${api}/modules/confirm`).set(bearer(user)).send({ moduleId });
  const review = (user: TestUser, body: object, moduleId = "acme.charts") => request(app).put(`${api}/modules/${moduleId}/reviews/me`).set(bearer(user)).send(body);
  const reviews = async (query = "") => (await request(app).get(`${api}/modules/acme.charts/reviews${query}`)).body;

  it("takes reviews only from users who activated the module, one each, and moves the figures", async () => {
    const verified = await createUser({ displayName: "Vera" });
    const stranger = await createUser();
    expectProblem(await review(stranger, { rating: 5 }), 403, "not_activated");
    expectProblem(await review(verified, { rating: 5 }), 403, "not_activated");
    expect((await activate(verified)).status).toBe(200);
    for (const body of [{ rating: 0 }, { rating: 6 }, { rating: 4.5 }, {}, { rating: 5, body: "x".repeat(2001) }, { rating: 5, title: "t".repeat(101) }, { rating: 5, extra: 1 }]) {
      expectProblem(await review(verified, body), 400, "invalid_request");
    }
    expectProblem(await review(verified, { rating: 5 }, "acme.nothing"), 404, "module_not_found");
    const written = await review(verified, { rating: 2, title: "  Meh <b>", body: "<script>alert(1)</script> Slow." });
    expect(written.status).toBe(200);
    expect(written.body).toMatchObject({ id: expect.stringMatching(/^rev_/), rating: 2, title: "Meh <b>", body: "<script>alert(1)</script> Slow.", author: { displayName: "Vera" }, version: "1.0.0" });
    const replaced = await review(verified, { rating: 4 });
    expect(replaced.body).toMatchObject({ id: written.body.id, rating: 4, title: null, createdAt: written.body.createdAt });
    expect((await reviews()).summary).toEqual({ average: 4, count: 1, histogram: { "1": 0, "2": 0, "3": 0, "4": 1, "5": 0 } });
    const page = await request(app).get(`${api}/modules/acme.charts`);
    expect(page.body.rating).toEqual({ average: 4, count: 1 });
    expect((await request(app).get(`${api}/modules?q=charts`)).body.items.find((item: Item) => item.id === "acme.charts").rating).toEqual({ average: 4, count: 1 });

    // The owner replies; others may not.
    const stranger2 = await createDeveloper("other");
    expectProblem(await request(app).put(`${api}/developers/modules/acme.charts/reviews/${written.body.id}/reply`).set(bearer(stranger2)).send({ body: "Hi" }), 403, "not_owner");
    const reply = await request(app).put(`${api}/developers/modules/acme.charts/reviews/${written.body.id}/reply`).set(bearer(owner)).send({ body: "Thanks: 1.1 is faster." });
    expect(reply.status).toBe(200);
    expect((await reviews()).items[0].reply).toMatchObject({ body: "Thanks: 1.1 is faster." });
    expect((await request(app).delete(`${api}/developers/modules/acme.charts/reviews/${written.body.id}/reply`).set(bearer(owner))).status).toBe(204);
    expect((await reviews()).items[0].reply).toBeUndefined();

    expect((await request(app).delete(`${api}/modules/acme.charts/reviews/me`).set(bearer(verified))).status).toBe(204);
    expect((await reviews()).summary).toEqual({ average: null, count: 0, histogram: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 } });
  });

  it("keeps the figures exact with 100 reviews at once, and pages them in each order", async () => {
    const users = await Promise.all(Array.from({ length: 100 }, () => createUser()));
    await Promise.all(users.map((user) => activate(user, "acme.other")));
    const ratings = users.map((_, i) => (i % 5) + 1);
    const answers = await Promise.all(users.map((user, i) => review(user, { rating: ratings[i], title: `Review ${i}` }, "acme.other")));
    expect(answers.map((answer) => answer.status)).toEqual(users.map(() => 200));
    const all = async (sort: string) => {
      const seen: { rating: number; id: string }[] = [];
      let cursor: string | null = null;
      do {
        const body: { items: { rating: number; id: string }[]; nextCursor: string | null } = (await request(app).get(`${api}/modules/acme.other/reviews?sort=${sort}&limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)).body;
        seen.push(...body.items);
        cursor = body.nextCursor;
      } while (cursor);
      return seen;
    };
    const summary = (await request(app).get(`${api}/modules/acme.other/reviews`)).body.summary;
    expect(summary).toEqual({ average: 3, count: 100, histogram: { "1": 20, "2": 20, "3": 20, "4": 20, "5": 20 } });
    const high = await all("rating_high");
    expect(high).toHaveLength(100);
    expect(new Set(high.map((item) => item.id)).size).toBe(100);
    expect(high.map((item) => item.rating)).toEqual([...ratings].sort((a, b) => b - a));
    expect((await all("rating_low")).map((item) => item.rating)).toEqual([...ratings].sort((a, b) => a - b));
    expect(await all("newest")).toHaveLength(100);

    // §24: only the reviews of some stars, or those the publisher has not answered, newest first, paged.
    const fours = await all("newest&rating=4");
    expect([fours.length, new Set(fours.map((item) => item.rating))]).toEqual([20, new Set([4])]);
    const answered = high.filter((item) => item.rating === 1).slice(0, 3);
    for (const item of answered) {
      expect((await request(app).put(`${api}/developers/modules/acme.other/reviews/${item.id}/reply`).set(bearer(owner)).send({ body: "Sorry: fixed in 1.1." })).status).toBe(200);
    }
    const unanswered = await all("newest&replied=false");
    expect(unanswered).toHaveLength(97);
    expect(unanswered.map((item) => item.id)).not.toEqual(expect.arrayContaining([answered[0].id]));
    expect((await all("newest&replied=true")).map((item) => item.id).sort()).toEqual(answered.map((item) => item.id).sort());
    expect(await all("newest&replied=false&rating=1")).toHaveLength(17);
    for (const query of ["rating=0", "rating=6", "rating=4.5", "replied=maybe", "rating=4&sort=rating_high", "replied=false&sort=rating_low"]) {
      expectProblem(await request(app).get(`${api}/modules/acme.other/reviews?${query}`), 400, "invalid_request");
    }
    // A cursor of one filter does not page another.
    const firstFours = (await request(app).get(`${api}/modules/acme.other/reviews?rating=4&limit=5`)).body.nextCursor as string;
    expectProblem(await request(app).get(`${api}/modules/acme.other/reviews?rating=5&limit=5&cursor=${encodeURIComponent(firstFours)}`), 400, "invalid_request");
  }, 60_000);

  it("shows a signed-in user their own review to edit; 404 before they write one", async () => {
    const user = await createUser({ displayName: "Mia" });
    expect((await activate(user)).status).toBe(200);
    expectProblem(await request(app).get(`${api}/modules/acme.charts/reviews/me`).set(bearer(user)), 404, "not_found");
    expectProblem(await request(app).get(`${api}/modules/acme.charts/reviews/me`), 401, "unauthenticated");
    expectProblem(await request(app).get(`${api}/modules/acme.nothing/reviews/me`).set(bearer(user)), 404, "module_not_found");
    const written = (await review(user, { rating: 3, title: "Fine" })).body;
    const mine = await request(app).get(`${api}/modules/acme.charts/reviews/me`).set(bearer(user));
    expect([mine.status, mine.body]).toEqual([200, written]);
    expect((await request(app).delete(`${api}/modules/acme.charts/reviews/me`).set(bearer(user))).status).toBe(204);
    expectProblem(await request(app).get(`${api}/modules/acme.charts/reviews/me`).set(bearer(user)), 404, "not_found");
  });

  it("takes reports, and an operator's hide takes a review out of the list and the figures until unhidden", async () => {
    const { reportedReviews, setReviewHidden } = await import("../src/reviews/service");
    const { operatorDeps } = await import("./support/harness");
    const author = await createUser();
    const reporter = await createUser();
    await activate(author);
    const written = (await review(author, { rating: 1, body: "Spam spam spam" })).body;
    const before = (await reviews()).summary.count;
    expectProblem(await request(app).post(`${api}/modules/acme.charts/reviews/${written.id}/report`).set(bearer(reporter)).send({ reason: "" }), 400, "invalid_request");
    expectProblem(await request(app).post(`${api}/modules/acme.charts/reviews/rev_00000000000000000000/report`).set(bearer(reporter)).send({ reason: "spam" }), 404, "not_found");
    for (let i = 0; i < 2; i += 1) expect((await request(app).post(`${api}/modules/acme.charts/reviews/${written.id}/report`).set(bearer(reporter)).send({ reason: "spam" })).status).toBe(202);
    const deps = await operatorDeps();
    expect(await reportedReviews(deps, {})).toEqual([expect.objectContaining({ moduleId: "acme.charts", reviewId: written.id, reports: 1, hidden: false })]);
    await setReviewHidden(deps, { moduleId: "acme.charts", reviewId: written.id, reason: "spam" }, true);
    const hidden = await reviews();
    expect(hidden.summary.count).toBe(before - 1);
    expect(hidden.items.map((item: { id: string }) => item.id)).not.toContain(written.id);
    await setReviewHidden(deps, { moduleId: "acme.charts", reviewId: written.id }, false);
    expect((await reviews()).summary.count).toBe(before);
    const audit = (await deps.db.collection("auditLog").where("target", "==", "acme.charts").get()).docs.map((doc) => doc.get("action"));
    expect(audit).toEqual(expect.arrayContaining(["review.hide", "review.unhide"]));
  });

  it("shows a review's figures in search on another instance within 2 s", async () => {
    const other = await otherInstanceApp();
    const user = await createUser();
    await activate(user);
    const before = (await request(other).get(`${api}/modules?q=charts`)).body.items[0].rating;
    await review(user, { rating: 5 });
    await eventually(async () => expect((await request(other).get(`${api}/modules?q=charts`)).body.items[0].rating).not.toEqual(before));
  });
});
