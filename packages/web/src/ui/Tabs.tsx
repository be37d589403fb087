import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/**
 * Tabs whose panels each have their own address (`#overview`, `#reviews`, …, §24): the WAI-ARIA
 * tabs pattern, with arrow keys between tabs, and the hash kept in step so a tab can be linked to
 * and the Back button returns to the previous one. `onlyCurrent`: hidden panels are not rendered
 * (the portal's sections each load their own data, and charts need a visible box to draw in);
 * `initial`: the tab shown when the address names none.
 */
export function Tabs({ label, tabs, onlyCurrent = false, initial }: { label: string; tabs: [id: string, name: string, panel: ComponentChildren][]; onlyCurrent?: boolean; initial?: string }) {
  const fromHash = () => {
    const hash = location.hash.slice(1);
    return tabs.some(([id]) => id === hash) ? hash : (initial ?? tabs[0][0]);
  };
  const [current, setCurrent] = useState(fromHash);
  useEffect(() => {
    const follow = () => setCurrent(fromHash());
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  const choose = (id: string, focus = false) => {
    history.pushState(null, "", `#${id}`);
    setCurrent(id);
    if (focus) document.getElementById(`tab-${id}`)?.focus();
  };
  const onKey = (event: KeyboardEvent) => {
    const at = tabs.findIndex(([id]) => id === current);
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (step === 0) return;
    event.preventDefault();
    choose(tabs[(at + step + tabs.length) % tabs.length][0], true);
  };
  return (
    <div class="tabs">
      <div role="tablist" aria-label={label} onKeyDown={onKey}>
        {tabs.map(([id, name]) => (
          <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={id === current} aria-controls={`panel-${id}`} tabIndex={id === current ? 0 : -1} onClick={() => choose(id)}>
            {name}
          </button>
        ))}
      </div>
      {tabs.map(([id, , panel]) => (
        <div key={id} role="tabpanel" id={`panel-${id}`} aria-labelledby={`tab-${id}`} hidden={id !== current} tabIndex={0}>
          {(!onlyCurrent || id === current) && panel}
        </div>
      ))}
    </div>
  );
}
