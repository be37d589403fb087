import type { User } from "@firebase/auth";
import { useEffect, useState } from "preact/hooks";
import { watchUser } from "../auth";

/** The signed-in Firebase user: undefined while unknown, null when signed out. */
export function useSignedInUser(): User | null | undefined | Error {
  const [user, setUser] = useState<User | null | undefined | Error>(undefined);
  useEffect(() => {
    let stop: (() => void) | undefined;
    watchUser(setUser).then(
      (unsubscribe) => (stop = unsubscribe),
      (error: unknown) => setUser(error instanceof Error ? error : new Error(String(error))),
    );
    return () => stop?.();
  }, []);
  return user;
}
