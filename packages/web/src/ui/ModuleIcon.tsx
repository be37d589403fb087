/** A module's icon, or its initial on a tile when it has none; decorative, its name is beside it. */
export function ModuleIcon({ url, name, size }: { url: string | null; name: string; size: number }) {
  if (url) return <img class="module-icon" src={url} alt="" width={size} height={size} />;
  return (
    <span class="module-icon placeholder" aria-hidden="true" style={{ width: `${size}px`, height: `${size}px`, fontSize: `${size / 2}px` }}>
      {name.trim().charAt(0).toUpperCase() || "?"}
    </span>
  );
}
