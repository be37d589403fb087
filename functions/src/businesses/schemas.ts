import { z } from "zod";
import { BUSINESS_ROLES } from "../access/rules";
import { documentId } from "../core/schemas";

export const createBusinessInput = z.object({ id: documentId, name: z.string().trim().min(1, "must not be empty").max(200) });
export const memberInput = z.object({ id: documentId, user: z.string().min(1), role: z.enum(BUSINESS_ROLES).default("member") });
export const removeMemberInput = memberInput.omit({ role: true });
