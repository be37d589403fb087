import { useRef, useState } from "preact/hooks";

interface Question {
  title: string;
  /** What is lost, in words. */
  detail: string;
  action: string;
}

/**
 * Asking before destroying (§24): `confirm` opens a modal dialog naming what is lost and resolves
 * true only when its action button is pressed (Escape and Cancel resolve false). Render `dialog`
 * once in the component that asks.
 */
export function useConfirm() {
  const ref = useRef<HTMLDialogElement>(null);
  const [question, setQuestion] = useState<Question | null>(null);
  const answer = useRef<(confirmed: boolean) => void>(() => undefined);

  const confirm = (asked: Question) =>
    new Promise<boolean>((resolve) => {
      answer.current = resolve;
      setQuestion(asked);
      queueMicrotask(() => ref.current?.showModal());
    });
  const close = (confirmed: boolean) => {
    answer.current(confirmed);
    answer.current = () => undefined;
    ref.current?.close();
  };

  const dialog = (
    <dialog ref={ref} class="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-detail" onClose={() => close(false)}>
      {question && (
        <>
          <h2 id="confirm-title">{question.title}</h2>
          <p id="confirm-detail">{question.detail}</p>
          <div class="button-row">
            <button type="button" class="danger" onClick={() => close(true)}>
              {question.action}
            </button>
            <button type="button" class="secondary" onClick={() => close(false)} autoFocus>
              Cancel
            </button>
          </div>
        </>
      )}
    </dialog>
  );
  return { confirm, dialog };
}
