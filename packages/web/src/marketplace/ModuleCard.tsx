import { sitePath, type Schemas } from "../api";
import { ModuleIcon } from "../ui/ModuleIcon";
import { Stars } from "../ui/Stars";

export function ModuleCard({ module }: { module: Schemas["MarketplaceModule"] }) {
  return (
    <article class="card">
      <ModuleIcon url={module.iconUrl ? sitePath(module.iconUrl) : null} name={module.name} size={48} />
      <div class="card-body">
        <h2>
          <a href={`/modules/${module.id}`}>{module.name}</a>
        </h2>
        <p class="summary">{module.summary}</p>
        <p class="rating">
          <Stars rating={module.rating} />
        </p>
        <p class="meta">
          <span>by {module.publisherId}</span>
          <span>v{module.latestVersion}</span>
          {module.category && <span>{module.category}</span>}
          {module.entitlement && <span class="badge">Needs {module.entitlement}</span>}
        </p>
      </div>
    </article>
  );
}
