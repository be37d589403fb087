import type { LocalStack } from "../../tools/local-stack";

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __localStack?: LocalStack }).__localStack?.stop();
}
