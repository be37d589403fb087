/** A rating as stars and figures, read out as words ("4.3 out of 5, 12 reviews"). */
export function Stars({ rating }: { rating: { average: number; count: number } | null }) {
  if (!rating) return <span class="stars muted">No reviews yet</span>;
  const full = Math.round(rating.average);
  return (
    <span class="stars" role="img" aria-label={`${rating.average} out of 5, ${rating.count} review${rating.count === 1 ? "" : "s"}`}>
      <span aria-hidden="true">
        {"★".repeat(full)}
        {"☆".repeat(5 - full)} {rating.average.toFixed(1)} ({rating.count})
      </span>
    </span>
  );
}
