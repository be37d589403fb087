import { z } from "zod";

/**
 * What built a version signed with an OIDC publish token (contract §15): the CI's identity, taken
 * from the claims of its OIDC token that exist. Stored with the version, shown to its owner, in
 * the download answer and inside the registry's signed payload.
 */
export const provenanceSchema = z
  .object({
    issuer: z.string(),
    subject: z.string(),
    repository: z.string().optional(),
    workflowRef: z.string().optional(),
    ref: z.string().optional(),
    sha: z.string().optional(),
    runId: z.string().optional(),
  })
  .meta({ id: "Provenance", description: "The CI run that signed the version through trusted publishing." });

export type Provenance = z.output<typeof provenanceSchema>;
