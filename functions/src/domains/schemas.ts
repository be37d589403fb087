import { z } from "zod";
import { documentId, domainName, isoDateTime } from "../core/schemas";

export const newDomainSchema = z.strictObject({ domain: domainName });
export const domainParamsSchema = z.strictObject({ businessId: documentId, domain: domainName });

export const domainSchema = z
  .object({
    domain: z.string(),
    txtName: z.string().meta({ description: "The name of the TXT record to add: `_marketplace-verification.<domain>`." }),
    txtValue: z.string().meta({ description: "The value the TXT record must hold." }),
    verifiedAt: isoDateTime.nullable().meta({ description: "When this business verified the domain; null while pending." }),
  })
  .meta({ id: "Domain" });

export const domainListSchema = z.object({ items: z.array(domainSchema) }).meta({ id: "DomainList" });
