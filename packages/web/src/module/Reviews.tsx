import type { User } from "@firebase/auth";
import { useEffect, useMemo, useState } from "preact/hooks";
import { dataOf, dataUnless, publicApi, signedInApi, type Schemas, type SignedInApi } from "../api";
import { useConfirm } from "../ui/confirm";
import { formatDate } from "../format";
import { ErrorMessage, Loading, StatusMessage } from "../ui/messages";
import { Stars } from "../ui/Stars";
import { useAction } from "../ui/use-action";
import { ReportContent } from "../notices/ReportContent";
import { signInReturningTo } from "../ui/sign-in-link";

type Review = Schemas["ModuleReview"];
type Sort = "newest" | "rating_high" | "rating_low";
type Stars = "1" | "2" | "3" | "4" | "5";
const SORT_NAMES: Record<Sort, string> = { newest: "Newest", rating_high: "Highest rated", rating_low: "Lowest rated" };

/**
 * A module's ratings and reviews (§18): the figures with their histogram, the reviews in an order
 * with the publisher's replies, and for a signed-in user who activated the module, their own
 * review to write, change or delete, and a way to report others'. Review text is plain text:
 * rendered as text, never as HTML.
 */
export function Reviews({ moduleId, publisherName, onRating }: { moduleId: string; publisherName: string; onRating: (rating: { average: number; count: number } | null) => void }) {
  const [sort, setSort] = useState<Sort>("newest");
  const [stars, setStars] = useState<Stars | null>(null);
  const [list, setList] = useState<Schemas["ReviewList"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [user, setUser] = useState<User | null>(null);
  const api = useMemo(() => (user ? signedInApi(() => user.getIdToken()) : null), [user]);

  const load = async (cursor: string | null) => {
    // A star filter lists newest first (the API orders filtered reviews so).
    const order = stars ? { rating: stars } : { sort };
    const page = await dataOf(publicApi.GET("/modules/{id}/reviews", { params: { path: { id: moduleId }, query: { ...order, limit: 10, ...(cursor ? { cursor } : {}) } } }));
    setList((shown) => (cursor && shown ? { ...page, items: [...shown.items, ...page.items] } : page));
    // The page's other rating figures follow the summary read just now (§24: current after a save).
    onRating(page.summary.count > 0 ? { average: page.summary.average ?? 0, count: page.summary.count } : null);
  };
  useEffect(() => {
    load(null).catch(setError);
  }, [moduleId, sort, stars]);
  useEffect(() => {
    // Firebase Auth loads with this part of the page only, and only to know who may write.
    let stop: (() => void) | undefined;
    import("../auth").then(({ watchUser }) => watchUser(setUser)).then((unsubscribe) => (stop = unsubscribe), setError);
    return () => stop?.();
  }, []);

  return (
    <section aria-labelledby="reviews-heading">
      <h2 id="reviews-heading">Ratings and reviews</h2>
      <ErrorMessage error={error} />
      {!list && !error && <Loading what="the reviews" />}
      {list && <Summary summary={list.summary} chosen={stars} onChoose={setStars} />}
      {api && user && <MyReview api={api} user={user} moduleId={moduleId} onChange={() => load(null)} />}
      {!user && (
        <p class="muted">
          <a href={signInReturningTo(`/modules/${moduleId}`)}>Sign in</a> to review a module you use.
        </p>
      )}
      {list && list.summary.count > 0 && (
        <div class="review-controls">
          <div class="field inline-field">
            <label for="reviews-stars">Show</label>
            <select id="reviews-stars" value={stars ?? ""} onChange={(event) => setStars((event.currentTarget.value || null) as Stars | null)}>
              <option value="">All reviews</option>
              {(["5", "4", "3", "2", "1"] as const).map((value) => (
                <option value={value} key={value}>
                  {value} stars ({list.summary.histogram[value]})
                </option>
              ))}
            </select>
          </div>
          {!stars && (
            <div class="field inline-field">
              <label for="reviews-sort">Sort reviews</label>
              <select id="reviews-sort" value={sort} onChange={(event) => setSort(event.currentTarget.value as Sort)}>
                {(Object.keys(SORT_NAMES) as Sort[]).map((value) => (
                  <option value={value} key={value}>
                    {SORT_NAMES[value]}
                  </option>
                ))}
              </select>
            </div>
          )}
        </div>
      )}
      {list && stars && list.items.length === 0 && (
        <p>
          No {stars}-star reviews.{" "}
          <button type="button" class="link-button" onClick={() => setStars(null)}>
            Show all reviews
          </button>
        </p>
      )}
      {list && list.items.length > 0 && (
        <>
          <ul class="reviews">
            {list.items.map((review) => (
              <li key={review.id}>
                <ReviewItem review={review} moduleId={moduleId} publisherName={publisherName} api={api} />
              </li>
            ))}
          </ul>
          {list.nextCursor && (
            <button type="button" class="secondary" onClick={() => void load(list.nextCursor).catch(setError)}>
              Show more reviews
            </button>
          )}
        </>
      )}
    </section>
  );
}

/** The figures, with each histogram row a filter: choosing a row lists only its reviews. */
function Summary({ summary, chosen, onChoose }: { summary: Schemas["RatingSummary"]; chosen: Stars | null; onChoose: (stars: Stars | null) => void }) {
  if (summary.count === 0) return <p>No reviews yet.</p>;
  const stars = ["5", "4", "3", "2", "1"] as const;
  return (
    <div class="rating-summary">
      <p class="big-rating">
        <Stars rating={{ average: summary.average ?? 0, count: summary.count }} />
      </p>
      <table class="histogram">
        <caption class="visually-hidden">Reviews by stars</caption>
        <tbody>
          {stars.map((star) => {
            const count = summary.histogram[star];
            return (
              <tr key={star}>
                <th scope="row">
                  {count > 0 ? (
                    <button type="button" class="link-button" aria-pressed={chosen === star} onClick={() => onChoose(chosen === star ? null : star)}>
                      {star} ★<span class="visually-hidden"> reviews only</span>
                    </button>
                  ) : (
                    <>{star} ★</>
                  )}
                </th>
                <td>
                  {/* The bar inside its track: both in the cell's content box, so the bar starts where the track does. */}
                  <span class="track">
                    <span class="bar" style={{ width: `${summary.count > 0 ? Math.round((count / summary.count) * 100) : 0}%` }} />
                  </span>
                </td>
                <td>{count}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function ReviewItem({ review, moduleId, publisherName, api }: { review: Review; moduleId: string; publisherName: string; api: SignedInApi | null }) {
  const [reporting, setReporting] = useState(false);
  const { error, status, run } = useAction();
  const report = (event: Event) => {
    event.preventDefault();
    const reason = String(new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "");
    return run(async () => {
      await dataOf(api!.POST("/modules/{id}/reviews/{reviewId}/report", { params: { path: { id: moduleId, reviewId: review.id } }, body: { reason } }));
      setReporting(false);
      return "Reported: the operators will look at it.";
    });
  };
  return (
    <article class="review">
      <header>
        <Stars rating={{ average: review.rating, count: 1 }} single /> {review.title && <strong>{review.title}</strong>}
        <p class="muted">
          <span class="badge ok">Verified install</span> {review.author.displayName ?? "A user"} · version {review.version} · {formatDate(review.createdAt)}
          {review.updatedAt !== review.createdAt && ` (edited ${formatDate(review.updatedAt)})`}
        </p>
      </header>
      {review.body && <p class="review-body">{review.body}</p>}
      {review.reply && (
        <div class="reply">
          <p class="muted">
            <strong>{publisherName}</strong> (the publisher) replied on {formatDate(review.reply.updatedAt)}:
          </p>
          <p class="review-body">{review.reply.body}</p>
        </div>
      )}
      {api && !reporting && (
        <button type="button" class="link-button" onClick={() => setReporting(true)}>
          Report<span class="visually-hidden"> this review</span>
        </button>
      )}
      {reporting && (
        <form class="inline-form" onSubmit={report}>
          <label for={`report-${review.id}`}>Why?</label>
          <input id={`report-${review.id}`} name="reason" required maxLength={500} placeholder="Spam, abuse, off-topic…" />
          <button type="submit">Report</button>
          <button type="button" class="secondary" onClick={() => setReporting(false)}>
            Cancel
          </button>
        </form>
      )}
      <ReportContent target={{ reviewId: review.id }} what="this review" api={api} />
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </article>
  );
}

/** The signed-in user's own review: written only by someone who activated the module. */
function MyReview({ api, user, moduleId, onChange }: { api: SignedInApi; user: User; moduleId: string; onChange: () => Promise<void> }) {
  const [activated, setActivated] = useState<boolean | null>(null);
  // Undefined while loading; null when the user has not reviewed the module.
  const [mine, setMine] = useState<Review | null | undefined>(undefined);
  const [editing, setEditing] = useState(false);
  const { error, status, run, setError } = useAction();
  const { confirm, dialog } = useConfirm();
  useEffect(() => {
    Promise.all([dataOf(api.GET("/users/me")), dataUnless("not_found", api.GET("/modules/{id}/reviews/me", { params: { path: { id: moduleId } } }))])
      .then(([me, review]) => {
        setActivated(me.activations.some((activation) => activation.moduleId === moduleId));
        setMine(review);
      })
      .catch(setError);
  }, [api, moduleId]);
  if (activated === null || mine === undefined) return <ErrorMessage error={error} />;
  if (!activated && !mine) return <p class="muted">Signed in as {user.email}. Only people who activated this module in the app can review it.</p>;

  const save = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    return run(async () => {
      const saved = await dataOf(
        api.PUT("/modules/{id}/reviews/me", {
          params: { path: { id: moduleId } },
          body: { rating: Number(form.get("rating")), title: String(form.get("title") ?? ""), body: String(form.get("body") ?? "") },
        }),
      );
      setMine(saved);
      setEditing(false);
      await onChange();
      return "Your review is saved.";
    });
  };
  const remove = async () => {
    if (!(await confirm({ title: "Delete your review?", detail: "Your stars and text leave this module's page and its rating.", action: "Delete review" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/modules/{id}/reviews/me", { params: { path: { id: moduleId } } }));
      setMine(null);
      await onChange();
      return "Your review is deleted.";
    });
  };

  if (mine && !editing) {
    return (
      <section class="review-form" aria-labelledby="my-review-heading">
        <h3 id="my-review-heading">Your review</h3>
        <ReviewText review={mine} />
        <p class="button-row">
          {activated ? (
            <button type="button" onClick={() => setEditing(true)}>
              Edit your review
            </button>
          ) : (
            <span class="muted">To change it, activate the module in the app again.</span>
          )}
          <button type="button" class="secondary" onClick={() => void remove()}>
            Delete your review
          </button>
        </p>
        <ErrorMessage error={error} />
        <StatusMessage>{status}</StatusMessage>
        {dialog}
      </section>
    );
  }
  return (
    <form class="stacked review-form" onSubmit={save} aria-labelledby="my-review-heading">
      <h3 id="my-review-heading">{mine ? "Edit your review" : "Write a review"}</h3>
      <fieldset class="star-picker">
        <legend>Rating</legend>
        {[1, 2, 3, 4, 5].map((stars) => (
          <label key={stars}>
            <input type="radio" name="rating" value={stars} required defaultChecked={mine?.rating === stars} /> {stars} ★
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for="review-title">Title (optional)</label>
        <input id="review-title" name="title" maxLength={100} defaultValue={mine?.title ?? ""} />
      </div>
      <div class="field">
        <label for="review-body">Review (optional)</label>
        <textarea id="review-body" name="body" maxLength={2000} rows={4} defaultValue={mine?.body ?? ""} />
      </div>
      <p class="button-row">
        <button type="submit">{mine ? "Save changes" : "Post review"}</button>
        {mine && (
          <button type="button" class="secondary" onClick={() => setEditing(false)}>
            Cancel
          </button>
        )}
      </p>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </form>
  );
}

/** A review's stars and text, as plain text. */
function ReviewText({ review }: { review: Review }) {
  return (
    <>
      <p>
        <Stars rating={{ average: review.rating, count: 1 }} single /> {review.title && <strong>{review.title}</strong>}
      </p>
      {review.body && <p class="review-body">{review.body}</p>}
    </>
  );
}
