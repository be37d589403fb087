import { useEffect, useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { useConfirm } from "../ui/confirm";
import { ErrorMessage, Loading, RetryableError, StatusMessage } from "../ui/messages";
import { Stars } from "../ui/Stars";
import { useAction } from "../ui/use-action";

type DeveloperModule = Schemas["DeveloperModules"]["items"][number];
type Review = Schemas["ModuleReview"];
type Shown = "all" | "unanswered";

/**
 * The reviews of the developer's listed modules, newest first, all or only the unanswered ones
 * (§24), with a reply form opened per review and its confirmation beside it.
 */
export function ReviewReplies({ api, modules }: { api: SignedInApi; modules: DeveloperModule[] }) {
  const listed = modules.filter((module) => module.latestVersion);
  const [moduleId, setModuleId] = useState(listed[0]?.id ?? "");
  const [shown, setShown] = useState<Shown>("unanswered");
  const [reviews, setReviews] = useState<Schemas["ReviewList"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = async (cursor: string | null) => {
    const page = await dataOf(
      publicApi.GET("/modules/{id}/reviews", { params: { path: { id: moduleId }, query: { limit: 20, ...(shown === "unanswered" ? { replied: "false" as const } : {}), ...(cursor ? { cursor } : {}) } } }),
    );
    setReviews((before) => (cursor && before ? { ...page, items: [...before.items, ...page.items] } : page));
  };
  const reload = () => {
    setError(null);
    load(null).catch(setError);
  };
  useEffect(() => {
    if (moduleId) reload();
  }, [moduleId, shown]);
  if (listed.length === 0) return null;

  return (
    <section aria-labelledby="reviews-panel-heading" class="panel">
      <h2 id="reviews-panel-heading">Reviews</h2>
      <div class="review-controls">
        <div class="field inline-field">
          <label for="reviews-module">Module</label>
          <select id="reviews-module" value={moduleId} onChange={(event) => setModuleId(event.currentTarget.value)}>
            {listed.map((module) => (
              <option value={module.id} key={module.id}>
                {module.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field inline-field">
          <label for="reviews-shown">Show</label>
          <select id="reviews-shown" value={shown} onChange={(event) => setShown(event.currentTarget.value as Shown)}>
            <option value="unanswered">Unanswered</option>
            <option value="all">All reviews</option>
          </select>
        </div>
      </div>
      {error ? <RetryableError error={error} what="the reviews" retry={reload} /> : null}
      {!reviews && !error && <Loading what="the reviews" />}
      {reviews && (
        <p>
          <Stars rating={reviews.summary.count ? { average: reviews.summary.average ?? 0, count: reviews.summary.count } : null} />
        </p>
      )}
      {reviews && reviews.items.length === 0 && <p>{shown === "unanswered" ? (reviews.summary.count > 0 ? "Every review has your reply." : "No reviews yet.") : "No reviews yet."}</p>}
      <ul class="reviews">
        {reviews?.items.map((review) => (
          <li key={review.id}>
            <ReplyableReview api={api} moduleId={moduleId} review={review} />
          </li>
        ))}
      </ul>
      {reviews?.nextCursor && (
        <button type="button" class="secondary" onClick={() => void load(reviews.nextCursor).catch(setError)}>
          Show more reviews
        </button>
      )}
    </section>
  );
}

/** One review, its reply, and the reply form, opened on demand. */
function ReplyableReview({ api, moduleId, review: initial }: { api: SignedInApi; moduleId: string; review: Review }) {
  const [review, setReview] = useState(initial);
  const [open, setOpen] = useState(false);
  const { error, status, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const path = { id: moduleId, reviewId: review.id };

  const save = (event: Event) => {
    event.preventDefault();
    const body = String(new FormData(event.currentTarget as HTMLFormElement).get("body") ?? "");
    return run(async () => {
      const saved = await dataOf(api.PUT("/developers/modules/{id}/reviews/{reviewId}/reply", { params: { path }, body: { body } }));
      setReview(saved);
      setOpen(false);
      return review.reply ? "Reply updated." : "Reply posted.";
    });
  };
  const remove = async () => {
    if (!(await confirm({ title: "Remove your reply?", detail: "It leaves the review on the module's page.", action: "Remove reply" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/developers/modules/{id}/reviews/{reviewId}/reply", { params: { path } }));
      const { reply: _removed, ...rest } = review;
      setReview(rest);
      return "Reply removed.";
    });
  };

  return (
    <article class="review">
      <header>
        <Stars rating={{ average: review.rating, count: 1 }} single /> {review.title && <strong>{review.title}</strong>}
        <p class="muted">
          {review.author.displayName ?? "A user"} · version {review.version} · {formatDate(review.createdAt)}
        </p>
      </header>
      {review.body && <p class="review-body">{review.body}</p>}
      {review.reply && !open && (
        <div class="reply">
          <p class="muted">Your reply, {formatDate(review.reply.updatedAt)}:</p>
          <p class="review-body">{review.reply.body}</p>
        </div>
      )}
      {open ? (
        <form class="stacked" onSubmit={(event) => void save(event)}>
          <div class="field">
            <label for={`reply-${review.id}`}>Your reply</label>
            <textarea id={`reply-${review.id}`} name="body" required maxLength={2000} rows={3} defaultValue={review.reply?.body ?? ""} autoFocus />
          </div>
          <p class="button-row">
            <button type="submit">{review.reply ? "Save reply" : "Post reply"}</button>
            <button type="button" class="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </p>
        </form>
      ) : (
        <div class="button-row">
          <button type="button" class="secondary" onClick={() => setOpen(true)}>
            {review.reply ? "Edit reply" : "Reply"}
          </button>
          {review.reply && (
            <button type="button" class="secondary" onClick={() => void remove()}>
              Remove reply
            </button>
          )}
          <StatusMessage>{status}</StatusMessage>
        </div>
      )}
      <ErrorMessage error={error} />
      {dialog}
    </article>
  );
}
