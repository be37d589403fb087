import { z } from "zod";
import { moduleTraderSchema } from "../traders/schemas";
import { isoDateTime } from "../core/schemas";
import { moduleAccessSchema, moduleIdSchema, modulePriceSchema, modulePublisherSchema, ratingSchema, versionSchema } from "../marketplace/schemas";

export const modulePageParamsSchema = z.strictObject({ id: moduleIdSchema });
export const moduleIconQuerySchema = z.strictObject({
  v: versionSchema.optional().meta({ description: "A published version (as iconUrl names it); by default the latest." }),
});

const sanitizedHtml = (what: string) =>
  z
    .string()
    .nullable()
    .meta({
      description: `The package's ${what}, rendered from Markdown and sanitized at sign: no scripts, handlers, styles, frames, forms or javascript:/data: URLs; images the package ships shown (served by GET /modules/:id/images/:index), others as links; every link rel="noopener nofollow ugc". Null when the package has none.`,
    });

export const modulePageSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    summary: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    tags: z.array(z.string()),
    publisherId: z.string(),
    publisher: modulePublisherSchema,
    entitlement: z.string().nullable().meta({ description: "Needed to use the module (with price: or a purchase of it); null when it needs none." }),
    price: modulePriceSchema.nullable().meta({ description: "Its price while it is for sale (§20); null when free." }),
    trader: moduleTraderSchema.optional().meta({ description: "With a price: who sells it, as its publisher declared (§30, the DSA's Art. 31)." }),
    installUrl: z.string().meta({ description: "Opens the desktop app on this module: <APP_URL_SCHEME>://install/<id> (§24)." }),
    visibility: z.enum(["public", "business"]).meta({ description: "business: private to the business of `businessId`, seen only by its members (§26)." }),
    businessId: z.string().nullable(),
    policy: z
      .object({ allowed: z.boolean(), businessId: z.string().optional(), businessName: z.string().optional(), reason: z.string().optional() })
      .optional()
      .meta({ description: "With a token: whether the install policies of the caller's businesses allow the latest version (§26); when not, which business refuses it and why." }),
    latestVersion: z.string(),
    updatedAt: isoDateTime,
    downloads: z.number().int(),
    rating: ratingSchema,
    iconUrl: z.string().nullable().meta({ description: "The latest version's icon, or null when its package has none." }),
    resources: z
      .object({
        homepage: z.string().nullable(),
        repository: z.string().nullable(),
        issues: z.string().nullable(),
        license: z.string().nullable(),
      })
      .meta({ description: "What the latest version's module.json links to (§24): http(s) addresses, and its licence; null where it gives none." }),
    readmeHtml: sanitizedHtml("README"),
    changelogHtml: sanitizedHtml("CHANGELOG"),
    versions: z
      .array(
        z.object({
          version: z.string(),
          publishedAt: isoDateTime.nullable().meta({ description: "Null for versions published before module pages existed, until an operator rebuilds the summaries." }),
          minAppVersion: z.string().nullable(),
          maxAppVersion: z.string().nullable(),
          yanked: z.boolean(),
        }),
      )
      .meta({ description: "Published versions, highest first; revoked versions are left out." }),
    access: moduleAccessSchema,
  })
  .meta({ id: "ModulePage" });

export const moduleImageParamsSchema = z.strictObject({
  id: moduleIdSchema,
  index: z.string().regex(/^(?:0|[1-9]\d?)$/, "An image's number, 0-15.").transform(Number).pipe(z.number().max(15, "An image's number, 0-15.")),
});
export const moduleImageSchema = z.string().meta({ format: "binary", description: "A PNG, JPEG, GIF or WebP of at most 512 KiB." });

export const moduleIconSchema = z.string().meta({ format: "binary", description: "A PNG of at most 512×512." });
