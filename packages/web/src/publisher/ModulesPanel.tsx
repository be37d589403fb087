import { useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { countOf, formatDate } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { useConfirm } from "../ui/confirm";
import { PublishSettings } from "./PublishSettings";

type DeveloperModule = Schemas["DeveloperModules"]["items"][number];
type DeveloperVersion = DeveloperModule["versions"][number];

/** The developer's modules: every version with its review, and yank and unyank. */
export function ModulesPanel({ api, modules, reload }: { api: SignedInApi; modules: DeveloperModule[]; reload: () => Promise<void> }) {
  const { error, status, run } = useAction();
  const { confirm, dialog } = useConfirm();

  const act = (what: string, call: () => Promise<unknown>) =>
    run(async () => {
      await call();
      await reload();
      return what;
    });
  const yank = async (module: DeveloperModule, version: DeveloperVersion, reason: string) => {
    const asked = {
      title: `Yank ${module.name} ${version.version}?`,
      detail: `Version ${version.version} of ${module.id} is withdrawn: update checks stop offering it and new installs get an earlier version; installs that have it keep it, and users see your reason ("${reason}"). You can unyank it later.`,
      action: `Yank ${version.version}`,
    };
    if (!(await confirm(asked))) return;
    await act(`Yanked ${module.id}@${version.version}.`, () =>
      dataOf(api.POST("/developers/modules/yank", { body: { moduleId: module.id, version: version.version, ...(reason ? { reason } : {}) } })),
    );
  };
  const unyank = (module: DeveloperModule, version: DeveloperVersion) =>
    act(`Put ${module.id}@${version.version} back.`, () => dataOf(api.POST("/developers/modules/unyank", { body: { moduleId: module.id, version: version.version } })));

  return (
    <section aria-labelledby="modules-heading" class="panel">
      <h2 id="modules-heading">Your modules</h2>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {modules.length === 0 && (
        <p class="muted">
          No modules yet. Pack and publish one with <code>npx mpkg publish</code>.
        </p>
      )}
      {modules.map((module) => (
        <section class="module-panel" aria-labelledby={`module-${module.id}`} key={module.id}>
          <h3 id={`module-${module.id}`}>
            {module.name} <code class="muted">{module.id}</code>
          </h3>
          <p class="meta">
            <span>Latest: {module.latestVersion ?? "none published"}</span>
            <span>{countOf(module.downloads, "download")}</span>
            {module.latestVersion && <a href={`/modules/${module.id}`}>Public page</a>}
          </p>
          <div class="table-scroll" tabIndex={0} role="region" aria-label={`Versions of ${module.id}`}>
            <table class="stacked">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">State</th>
                  <th scope="col">Review</th>
                  <th scope="col">Signed</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {module.versions.map((version) => (
                  <tr key={version.version}>
                    <th data-label="Version" scope="row">{version.version}</th>
                    <td data-label="State">
                      <VersionState version={version} />
                    </td>
                    <td data-label="Review">
                      <Review review={version.review} />
                    </td>
                    <td data-label="Signed">{formatDate(version.signedAt)}</td>
                    <td data-label="Action">
                      <VersionAction module={module} version={version} onYank={yank} onUnyank={unyank} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <PublishSettings api={api} module={module} onPolicyChanged={reload} />
        </section>
      ))}
      {dialog}
    </section>
  );
}

function VersionState({ version }: { version: DeveloperVersion }) {
  if (version.revocation) return <span class="badge danger" title={version.revocation.reason}>Revoked</span>;
  if (version.yankedAt) {
    return (
      <>
        <span class="badge warn">Yanked</span>
        {version.yankReason && <span class="reason">{version.yankReason}</span>}
      </>
    );
  }
  return <span>{version.state === "published" ? "Published" : "Signed"}</span>;
}

function Review({ review }: { review: DeveloperVersion["review"] }) {
  const label = { passed: "Passed", quarantined: "Quarantined", approved: "Approved", rejected: "Rejected" }[review.state];
  return (
    <div class="check-review">
      <span class={`badge ${review.state === "passed" || review.state === "approved" ? "ok" : "warn"}`}>{label}</span>
      {review.findings.length > 0 && (
        <ul class="findings">
          {review.findings.map((finding, index) => (
            <li key={index}>
              {finding.check === "similar_name" ? `Name resembles ${finding.similarTo ?? "another module"}` : `${finding.check}${finding.rule ? ` (${finding.rule})` : ""}`}
              {finding.path ? ` in ${finding.path}${finding.line ? `:${finding.line}` : ""}` : ""}
            </li>
          ))}
        </ul>
      )}
      {review.reason && <p class="muted">Reviewer: {review.reason}</p>}
    </div>
  );
}

function VersionAction({
  module,
  version,
  onYank,
  onUnyank,
}: {
  module: DeveloperModule;
  version: DeveloperVersion;
  onYank: (module: DeveloperModule, version: DeveloperVersion, reason: string) => Promise<void>;
  onUnyank: (module: DeveloperModule, version: DeveloperVersion) => Promise<void>;
}) {
  const [busy, setBusy] = useState(false);
  if (version.state !== "published" || version.revocation) return <span class="muted">—</span>;
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    await action();
    setBusy(false);
  };
  const label = `${module.id} ${version.version}`;
  if (version.yankedAt) {
    return (
      <button type="button" class="secondary" disabled={busy} aria-label={`Unyank ${label}`} onClick={() => void run(() => onUnyank(module, version))}>
        Unyank
      </button>
    );
  }
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        const reason = String(new FormData(event.currentTarget).get("reason") ?? "").trim();
        void run(() => onYank(module, version, reason));
      }}
    >
      <label class="visually-hidden" for={`reason-${module.id}-${version.version}`}>
        Reason to yank {label}
      </label>
      <input id={`reason-${module.id}-${version.version}`} name="reason" placeholder="Why? (users see it)" required maxLength={500} />
      <button type="submit" class="danger" disabled={busy} aria-label={`Yank ${label}`}>
        Yank
      </button>
    </form>
  );
}
