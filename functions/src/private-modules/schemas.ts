import { z } from "zod";
import { PUBLISHER_ID } from "../core/documents";

export const businessPublisherBodySchema = z.strictObject({
  publisherId: z.string().max(32).regex(PUBLISHER_ID, "publisherId must be 3-32 of [a-z0-9-], starting with a letter."),
});

export const businessPublisherSchema = z
  .object({
    publisherId: z.string(),
    businessId: z.string(),
  })
  .meta({ id: "BusinessPublisher" });
