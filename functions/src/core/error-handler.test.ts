import { isBackendUnavailable } from "./error-handler";

describe("isBackendUnavailable: a backend's passing failure is a 503, never a 500", () => {
  const grpc = (code: number, message = "") => Object.assign(new Error(message), { code });
  it("takes Firestore's unavailable, overloaded, deadline and aborted statuses, and a transaction it gave up on under contention", () => {
    const table: [unknown, boolean][] = [
      [grpc(14, "14 UNAVAILABLE"), true],
      [grpc(10, "10 ABORTED: Transaction lock timeout."), true],
      [grpc(4), true],
      [grpc(8), true],
      [grpc(3, "3 INVALID_ARGUMENT: Transaction is invalid or closed."), true],
      [grpc(3, "3 INVALID_ARGUMENT: The referenced transaction has expired or is no longer valid."), true],
      [grpc(3, "3 INVALID_ARGUMENT: Value for argument data is not a valid Firestore document."), false],
      [grpc(6, "6 ALREADY_EXISTS"), false],
      [Object.assign(new Error("reset"), { code: "ECONNRESET" }), true],
      [new Error("boom"), false],
      [null, false],
    ];
    for (const [error, expected] of table) expect([String((error as Error | null)?.message), isBackendUnavailable(error)]).toEqual([String((error as Error | null)?.message), expected]);
  });
});
