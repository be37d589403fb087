import { z } from "zod";
import { provenanceSchema } from "../core/provenance";
import { MODULE_ID, semverVersion } from "../core/documents";
import { documentId } from "../core/schemas";
import { pageQuery } from "../core/pagination";
import { deviceIdSchema, isoDateTime } from "../core/schemas";
import { PRICINGS, SORTS } from "./ranking";

export const moduleIdSchema = z.string().max(97).regex(MODULE_ID, "Not a module id ('<publisherId>.<name>').");
export const versionSchema = semverVersion.meta({ description: "A semver version, e.g. 1.2.3." });

export const appVersion = semverVersion.meta({ description: "The desktop app's version: chooses the highest version compatible with it." });

/** A facet's chosen values: one, or several comma-separated (any of them matches, §24); at most 20. */
function facetValues(longest: number) {
  return z
    .string()
    .min(1)
    .max(21 * (longest + 1))
    .transform((raw) => [...new Set(raw.split(",").map((value) => value.trim()))])
    .pipe(z.array(z.string().min(1, "An empty value between commas.").max(longest)).max(20))
    .meta({ description: `One value, or several comma-separated (at most 20, each 1-${longest} characters): a module with any of them matches.` });
}

export const moduleListQuerySchema = z.strictObject({
  ...pageQuery,
  appVersion: appVersion.optional(),
  q: z.string().max(200).optional().meta({
    description:
      "Any text: every word must match a word of the id, name, summary, description, tags, category or publisher, whole, as a prefix, or within one edit (4+ letters) or two (8+); a swap of two neighbouring letters counts as one edit.",
  }),
  sort: z.enum(SORTS).optional().meta({ description: "relevance (the default with q), updated (the default without), downloads, rating (smoothed), name." }),
  category: facetValues(40).optional(),
  publisher: facetValues(40).optional(),
  tag: facetValues(24).optional(),
  pricing: z.enum(PRICINGS).optional(),
  business: documentId.optional().meta({ description: "A business of the caller's (a token is needed): its private modules beside the public ones, each item with its install policy's decision (§26)." }),
  facets: z
    .enum(["true", "false"])
    .transform((value) => value === "true")
    .optional()
    .meta({ description: "true adds facet counts over the whole result." }),
});

/** The desktop app's platform (§28): what analytics split by; absent is counted as unknown. */
export const platformSchema = z.enum(["win32", "darwin", "linux"]).meta({ description: "The app's platform (process.platform): win32, darwin or linux; analytics split by it (§28)." });

export const modulePriceSchema = z
  .object({
    model: z.enum(["one_time", "subscription"]),
    amount: z.number().int().meta({ description: "In the currency's minor unit (cents)." }),
    currency: z.string().meta({ description: "Lowercase ISO 4217, one of MARKETPLACE_CURRENCIES." }),
    interval: z.enum(["month", "year"]).nullable().meta({ description: "A subscription's billing interval; null for one-time." }),
    trialDays: z.number().int().meta({ description: "Days of free trial a buyer gets once per module (subscriptions)." }),
    perSeat: z.boolean().meta({ description: "Whether businesses may buy it per seat." }),
    fallback: z.enum(["none", "perpetual"]).meta({ description: "perpetual (subscriptions only, §27): after a year of paying, the versions of that year stay the buyer's, with their bug fixes." }),
  })
  .meta({ id: "ModulePrice" });

export const ratingSchema = z
  .object({ average: z.number().meta({ description: "To one decimal." }), count: z.number().int() })
  .nullable()
  .meta({ id: "Rating", description: "Null before the first review." });

const facetCounts = z.array(z.object({ value: z.string(), count: z.number().int() }));
export const facetsSchema = z
  .object({ category: facetCounts, publisher: facetCounts, tag: facetCounts, pricing: facetCounts })
  .meta({ id: "ModuleFacets", description: "Counts over the whole result, not the page, largest first." });

export const moduleAccessSchema = z
  .object({ usable: z.boolean(), activated: z.boolean() })
  .optional()
  .meta({ description: "Present when the request carries an ID token." });

export const modulePublisherSchema = z
  .object({
    id: z.string(),
    displayName: z.string().meta({ description: "The name its developer registered with (§4)." }),
    verifiedDomain: z.string().nullable().meta({ description: "The domain an operator verified the publisher controls (§24), or null." }),
  })
  .meta({ id: "ModulePublisher" });

export const marketplaceModuleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    summary: z.string(),
    category: z.string().nullable(),
    publisherId: z.string(),
    publisher: modulePublisherSchema,
    latestVersion: z.string(),
    entitlement: z.string().nullable().meta({ description: "Needed to use the module (with price: or a purchase of it); null when it needs none." }),
    price: modulePriceSchema.nullable().meta({ description: "Its price while it is for sale (§20); null when free." }),
    updatedAt: isoDateTime,
    tags: z.array(z.string()),
    rating: ratingSchema,
    downloads: z.number().int().meta({ description: "Installs: downloads of every version." }),
    iconUrl: z.string().nullable().meta({ description: "The latest version's icon (GET /modules/:id/icon), or null when its package has none." }),
    compatibleVersion: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "With ?appVersion: the highest version not yanked that is compatible with it, or null." }),
    access: moduleAccessSchema,
    visibility: z.enum(["public", "business"]).meta({ description: "business: private to the business of `businessId`, seen only by its members (§26)." }),
    businessId: z.string().nullable(),
    policy: z
      .object({ allowed: z.boolean(), reason: z.string().optional() })
      .optional()
      .meta({ description: "With ?business: whether the business's install policy allows the version the item lists (compatibleVersion, else latestVersion), and why not." }),
  })
  .meta({ id: "MarketplaceModule" });

export const moduleListSchema = z
  .object({
    items: z.array(marketplaceModuleSchema),
    nextCursor: z.string().nullable(),
    total: z.number().int().meta({ description: "How many modules the whole result holds, over every page." }),
    suggestion: z.string().nullable().optional().meta({ description: "With q and no result: another spelling within 2 edits of its words that finds modules with the same filters, or null." }),
    facets: facetsSchema.optional(),
  })
  .meta({ id: "MarketplaceModuleList" });

export const downloadParamsSchema = z.strictObject({ id: moduleIdSchema });
export const downloadQuerySchema = z.strictObject({ version: versionSchema.optional(), appVersion: appVersion.optional() });

export const updatesBodySchema = z.strictObject({
  appVersion,
  installed: z.array(z.strictObject({ moduleId: moduleIdSchema, version: versionSchema })).min(1).max(200),
  deviceId: deviceIdSchema.optional().meta({ description: "The device checking (§28): it counts among each installed module's active devices, once a day." }),
  platform: platformSchema.optional(),
});

export const moduleUpdatesSchema = z
  .object({
    items: z.array(
      z.object({
        moduleId: z.string(),
        installedVersion: z.string(),
        version: z.string().nullable().meta({ description: "The compatible version to move to, allowed by every install policy of the caller's businesses (§26); null when an installed yanked, revoked or blocked version has none." }),
        usable: z.boolean(),
        yanked: z.boolean().meta({ description: "Whether the installed version is yanked." }),
        revoked: z.boolean().meta({ description: "Whether the installed version is revoked: the app must stop using it." }),
        blocked: z.boolean().meta({ description: "Whether an install policy of one of the caller's businesses blocks the installed version (§26); `version` is then the newest allowed one, or null." }),
      }),
    ),
  })
  .meta({ id: "ModuleUpdates" });

export const downloadSchema = z
  .object({
    moduleId: z.string(),
    version: z.string(),
    url: z.string().meta({ description: "V4 signed Cloud Storage URL, valid at most 15 minutes." }),
    expiresAt: isoDateTime,
    sha256: z.string(),
    size: z.number().int(),
    signature: z.string().meta({ description: "The registry's compact JWS (EdDSA) over the package (§5): verify it against GET /signing-keys." }),
    keyId: z.string(),
    authorSignature: z.string().nullable().meta({ description: "The author's own JWS over { moduleId, version, sha256 }, when the package was author-signed (§15)." }),
    authorKeyId: z.string().nullable().meta({ description: "Its key, in GET /publishers/:publisherId/keys." }),
    provenance: provenanceSchema.nullable(),
  })
  .meta({ id: "ModuleDownload" });

// Publishing: /developers/modules*
