import type { Schemas } from "../api";

/** A publisher as people know it (§24): its display name, and the domain an operator verified it controls. */
export function PublisherName({ publisher }: { publisher: Schemas["ModulePublisher"] }) {
  return (
    <span class="publisher-name">
      <a href={`/?publisher=${encodeURIComponent(publisher.id)}`}>{publisher.displayName}</a>
      {publisher.verifiedDomain && (
        <span class="verified" title={`The marketplace verified that this publisher controls ${publisher.verifiedDomain}.`}>
          <span aria-hidden="true">✓</span> Verified · {publisher.verifiedDomain}
        </span>
      )}
    </span>
  );
}
