import type { LocalStack } from "../../../tools/local-stack";

/** Stops the emulators, but never lets a stuck one hold the test run (and CI) open. */
export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __localStack?: LocalStack }).__localStack;
  if (!stack) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      console.warn("The emulators did not stop within 20 s; leaving the rest to process exit.");
      resolve();
    }, 20_000);
  });
  await Promise.race([stack.stop(), timeout]);
  clearTimeout(timer);
}
