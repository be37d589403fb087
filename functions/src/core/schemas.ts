import { z } from "zod";

/** Building blocks shared by the resources' schemas. */

export const isoDateTime = z.iso.datetime().meta({ description: "RFC 3339 timestamp, UTC." });

/** A Firestore document id as it may appear in a path: no slash, not "." or "..", not __reserved__. */
export const documentId = z
  .string()
  .min(1)
  .max(200)
  .refine((id) => !id.includes("/") && id !== "." && id !== ".." && !/^__.*__$/.test(id), "Not a valid id.");

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string().meta({ description: "Stable, snake_case error code for programs." }),
    detail: z.string().optional(),
    requestId: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details." });
