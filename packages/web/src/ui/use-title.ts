import { useEffect } from "preact/hooks";

/** The page's title, as the browser and screen readers name it: "<title> · Marketplace". */
export function useTitle(title: string) {
  useEffect(() => {
    document.title = `${title} · Marketplace`;
  }, [title]);
}
