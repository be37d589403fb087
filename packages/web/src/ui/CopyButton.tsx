import { useState } from "preact/hooks";

/** Copies a text (a link, a token) to the clipboard, and says so (§24). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <>
      <button type="button" class="secondary" onClick={() => void copy()}>
        {state === "copied" ? "Copied" : "Copy"}
        <span class="visually-hidden"> {label}</span>
      </button>
      {state === "failed" && <span class="muted"> The browser did not allow copying: select the text and copy it by hand.</span>}
    </>
  );
}
