import { useEffect, useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { Stars } from "../ui/Stars";
import { useAction } from "../ui/use-action";

type DeveloperModule = Schemas["DeveloperModules"]["items"][number];
type Review = Schemas["ModuleReview"];

/** The reviews of the developer's listed modules, newest first, with a reply to each (§18). */
export function ReviewReplies({ api, modules }: { api: SignedInApi; modules: DeveloperModule[] }) {
  const listed = modules.filter((module) => module.latestVersion);
  const [moduleId, setModuleId] = useState(listed[0]?.id ?? "");
  const [reviews, setReviews] = useState<Schemas["ReviewList"] | null>(null);
  const { error, status, run, setError } = useAction();
  const reload = async () => setReviews(await dataOf(publicApi.GET("/modules/{id}/reviews", { params: { path: { id: moduleId }, query: { limit: 50 } } })));
  useEffect(() => {
    if (moduleId) reload().catch(setError);
  }, [moduleId]);
  if (listed.length === 0) return null;

  const reply = (review: Review, event: Event) => {
    event.preventDefault();
    const body = String(new FormData(event.currentTarget as HTMLFormElement).get("body") ?? "");
    return run(async () => {
      await dataOf(api.PUT("/developers/modules/{id}/reviews/{reviewId}/reply", { params: { path: { id: moduleId, reviewId: review.id } }, body: { body } }));
      await reload();
      return "Reply saved.";
    });
  };
  const remove = (review: Review) =>
    run(async () => {
      await dataOf(api.DELETE("/developers/modules/{id}/reviews/{reviewId}/reply", { params: { path: { id: moduleId, reviewId: review.id } } }));
      await reload();
      return "Reply removed.";
    });

  return (
    <section aria-labelledby="reviews-panel-heading" class="panel">
      <h2 id="reviews-panel-heading">Reviews</h2>
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
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {reviews && (
        <p>
          <Stars rating={reviews.summary.count ? { average: reviews.summary.average ?? 0, count: reviews.summary.count } : null} />
        </p>
      )}
      {reviews && reviews.items.length === 0 && <p>No reviews yet.</p>}
      <ul class="reviews">
        {reviews?.items.map((review) => (
          <li key={review.id}>
            <article class="review">
              <header>
                <Stars rating={{ average: review.rating, count: 1 }} /> {review.title && <strong>{review.title}</strong>}
                <p class="muted">
                  {review.author.displayName ?? "A user"} · version {review.version} · {formatDate(review.createdAt)}
                </p>
              </header>
              {review.body && <p class="review-body">{review.body}</p>}
              <form class="stacked" onSubmit={(event) => void reply(review, event)}>
                <div class="field">
                  <label for={`reply-${review.id}`}>Your reply</label>
                  <textarea id={`reply-${review.id}`} name="body" required maxLength={2000} rows={2} defaultValue={review.reply?.body ?? ""} key={review.reply?.updatedAt ?? "none"} />
                </div>
                <p class="button-row">
                  <button type="submit">{review.reply ? "Update reply" : "Reply"}</button>
                  {review.reply && (
                    <button type="button" class="secondary" onClick={() => void remove(review)}>
                      Remove reply
                    </button>
                  )}
                </p>
              </form>
            </article>
          </li>
        ))}
      </ul>
    </section>
  );
}
