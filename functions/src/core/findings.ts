import { z } from "zod";

/** What a package check found (contract §14): in a refused package's problem, and in a version's review. */
export const packageFindingSchema = z
  .object({
    check: z.enum(["secret", "blocklist", "similar_name"]),
    rule: z.string().optional().meta({ description: "The rule that matched (secrets), or 'blocklist'." }),
    path: z.string().nullable().optional().meta({ description: "The entry of the package; null for the package as a whole." }),
    line: z.number().int().optional(),
    excerpt: z.string().optional().meta({ description: "At most the first 4 characters of the secret, then '…'." }),
    sha256: z.string().optional(),
    similarTo: z.string().optional().meta({ description: "The other publisher's module whose name this one resembles." }),
  })
  .meta({ id: "PackageFinding" });

export type PackageFinding = z.output<typeof packageFindingSchema>;
