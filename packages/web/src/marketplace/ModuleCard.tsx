import { sitePath, type Schemas } from "../api";
import { formatCount, formatDate, formatPrice } from "../format";
import { ModuleIcon } from "../ui/ModuleIcon";
import { PublisherName } from "../ui/PublisherName";
import { Stars } from "../ui/Stars";

/** A module in a list (§24): what people compare at a glance: rating, installs, last update, price. */
export function ModuleCard({ module }: { module: Schemas["MarketplaceModule"] }) {
  return (
    <article class="card">
      <ModuleIcon url={module.iconUrl ? sitePath(module.iconUrl) : null} name={module.name} size={48} />
      <div class="card-body">
        <h2>
          <a href={`/modules/${module.id}`}>{module.name}</a>
        </h2>
        <p class="publisher">
          by <PublisherName publisher={module.publisher} />
        </p>
        <p class="summary">{module.summary}</p>
        <p class="rating">
          <Stars rating={module.rating} />
        </p>
        <p class="meta">
          <span>
            {formatCount(module.downloads)} install{module.downloads === 1 ? "" : "s"}
          </span>
          <span>Updated {formatDate(module.updatedAt)}</span>
          <span class="price-tag">{module.price ? formatPrice(module.price) : module.entitlement ? <span class="badge">Needs {module.entitlement}</span> : "Free"}</span>
        </p>
        {(module.visibility === "business" || module.policy?.allowed === false) && (
          <p class="meta">
            {module.visibility === "business" && <span class="badge ok">Your company's</span>}
            {module.policy?.allowed === false && <span class="badge warn" title={module.policy.reason}>Blocked by your company</span>}
          </p>
        )}
      </div>
    </article>
  );
}
