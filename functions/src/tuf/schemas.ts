import { z } from "zod";
import { moduleIdSchema } from "../marketplace/schemas";

export const metadataParamsSchema = z.strictObject({
  file: z.string().max(64).meta({ description: "`timestamp.json`, or `<version>.<role>.json` (root, targets, snapshot, bins-000 … bins-3ff)." }),
});

export const targetParamsSchema = z.strictObject({
  moduleId: moduleIdSchema,
  file: z.string().max(160).meta({ description: "`<sha256>.<version>.mpkg`: the target `modules/<moduleId>/<version>.mpkg` under consistent snapshots." }),
});

export const tufMetadataSchema = z
  .object({ signed: z.record(z.string(), z.unknown()), signatures: z.array(z.object({ keyid: z.string(), sig: z.string() })) })
  .meta({ description: "TUF metadata (specification 1.0), signed; the bytes are served exactly as signed." });
