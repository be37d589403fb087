import type { Command } from "commander";
import { ask, readAll, type Cli } from "../cli";
import { unwrap } from "../problems";
import { anonymousClient, forgetLogin, saveLogin } from "../session";

/** `login`, `register` and `logout`: the saved login. */
export function registerAccountCommands(program: Command, { io, apiOf, print }: Cli): void {
  program
    .command("login")
    .description("sign in with email and password; keeps a refresh token in $MPKG_CONFIG_DIR, else your config folder ($XDG_CONFIG_HOME/mpkg or ~/.config/mpkg)")
    .option("--email <email>", "(asked for when missing)")
    .option("--password-stdin", "read the password from standard input (for scripts)")
    .action(async (options: { email?: string; passwordStdin?: boolean }, command: Command) => {
      const email = options.email ?? (await ask(io, "Email: ", false));
      const password = options.passwordStdin ? (await readAll(io.stdin)).replace(/\r?\n$/, "") : await ask(io, "Password: ", true);
      const api = apiOf(command);
      const session = unwrap(await anonymousClient(api).POST("/developers/auth/login", { body: { email, password } }));
      const file = await saveLogin(io.env, { api, email, refreshToken: session.refreshToken });
      print(command, { email, publisherId: session.developer.publisherId, credentials: file });
    });

  program
    .command("register")
    .description("create your marketplace account and publisher, and sign in (as `mpkg login` does)")
    .requiredOption("--publisher-id <id>", "your namespace: module ids will be <id>.<name> (3-32 of a-z, 0-9, '-')")
    .requiredOption("--display-name <name>", "the name users see")
    .option("--email <email>", "(asked for when missing)")
    .option("--password-stdin", "read the password from standard input (for scripts)")
    .action(async (options: { publisherId: string; displayName: string; email?: string; passwordStdin?: boolean }, command: Command) => {
      const email = options.email ?? (await ask(io, "Email: ", false));
      const password = options.passwordStdin ? (await readAll(io.stdin)).replace(/\r?\n$/, "") : await ask(io, "Password (8+ characters): ", true);
      const api = apiOf(command);
      const body = { email, password, displayName: options.displayName, publisherId: options.publisherId };
      const session = unwrap(await anonymousClient(api).POST("/developers/auth/register", { body }));
      if (!("refreshToken" in session) || session.refreshToken === null) throw new Error("The API made the account but did not sign in; run `mpkg login`.");
      const file = await saveLogin(io.env, { api, email, refreshToken: session.refreshToken });
      print(command, { email, publisherId: session.developer.publisherId, credentials: file });
    });

  program
    .command("logout")
    .description("forget the saved login")
    .action(async (_options: object, command: Command) => print(command, { loggedOut: await forgetLogin(io.env) }));
}
