import type { Command } from "commander";
import { generateAuthorKey, readAuthorKey } from "../author-keys";
import type { Cli } from "../cli";
import { unwrap } from "../problems";

/** `keys generate|add|list|revoke`: author keys. */
export function registerKeyCommands(program: Command, { print, asPublisher }: Cli): void {
  const keys = program.command("keys").description("author keys: sign your packages yourself, on top of the marketplace's signature (need `mpkg login`)");
  keys
    .command("generate")
    .description("make a new Ed25519 key pair in a JWK file (owner-only permissions; keep it secret, back it up)")
    .argument("<file>", "where to write it, e.g. ~/.mpkg/author-key.json")
    .action(async (file: string, _options: object, command: Command) => {
      const key = await generateAuthorKey(file);
      print(command, { file: key.path, kid: key.kid, next: `mpkg keys add ${file} --name <name>` });
    });
  keys
    .command("add")
    .description("register the public half of a key file with your publisher (at most 10 active keys)")
    .argument("<file>", "a JWK file (only its public half is sent)")
    .requiredOption("--name <name>", "what the key is, e.g. 'release laptop'")
    .action(async (file: string, options: { name: string }, command: Command) => {
      const key = await readAuthorKey(file);
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.POST("/developers/keys", { body: { name: options.name, publicKey: key.publicJwk } })));
    });
  keys
    .command("list")
    .description("your publisher's keys, revoked ones included")
    .action(async (_options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.GET("/developers/keys")).items);
    });
  keys
    .command("revoke")
    .description("revoke a key: packages signed with it are refused from now on")
    .argument("<kid>", "the key's id (as `keys list` shows it)")
    .action(async (kid: string, _options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      const answer = await client.DELETE("/developers/keys/{kid}", { params: { path: { kid } } });
      if (!answer.response.ok) unwrap(answer);
      print(command, { kid, revoked: true });
    });
}
