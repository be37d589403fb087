import { z } from "zod";
import { ACTOR_KINDS } from "../core/audit-log";
import { pageQuery } from "../core/pagination";
import { isoDateTime } from "../core/schemas";
import { moduleIdSchema } from "../marketplace/schemas";

export const auditParamsSchema = z.strictObject({ id: moduleIdSchema });
export const auditQuerySchema = z.strictObject(pageQuery);

export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: isoDateTime,
    actor: z.object({ kind: z.enum(ACTOR_KINDS), id: z.string() }),
    action: z.string().meta({ description: "e.g. module.sign, module.publish, module.yank, review.approve, module.revoke." }),
    target: z.string().meta({ description: "The module, or `moduleId@version`." }),
    requestId: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "AuditEntry" });

export const auditPageSchema = z.object({ items: z.array(auditEntrySchema), nextCursor: z.string().nullable() }).meta({ id: "AuditPage" });
