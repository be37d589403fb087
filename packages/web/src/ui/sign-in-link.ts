/** Where to sign in from a page that wants the person back once signed in (§24: a module page returns to itself); /account honours `next` for paths of this site only. */
export const signInReturningTo = (path: string) => `/account?next=${encodeURIComponent(path)}`;
