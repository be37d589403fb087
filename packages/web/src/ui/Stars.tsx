/** A rating as stars and figures, read out as words ("4.3 out of 5, 12 reviews"); one review's own stars without a count. */
export function Stars({ rating, single = false }: { rating: { average: number; count: number } | null; single?: boolean }) {
  if (!rating) return <span class="stars muted">No reviews yet</span>;
  const full = Math.round(rating.average);
  return (
    <span class="stars" role="img" aria-label={single ? `${rating.average} out of 5` : `${rating.average} out of 5, ${rating.count} review${rating.count === 1 ? "" : "s"}`}>
      <span aria-hidden="true">
        {"★".repeat(full)}
        {"☆".repeat(5 - full)}
        {single ? "" : ` ${rating.average.toFixed(1)} (${rating.count})`}
      </span>
    </span>
  );
}
