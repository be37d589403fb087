import { z } from "zod";
import { emailAddress, isoDateTime, oneLine } from "../core/schemas";

/**
 * The trader declaration of a publisher (contract §30, the Digital Services Act's Articles 30–31):
 * who sells, as buyers in the EU must be able to see it before they pay.
 */

const text = (max: number, description: string) => oneLine(z.string().trim().min(1).max(max)).meta({ description });

const traderFields = {
  name: text(200, "The trader's legal name (a person's or a company's)."),
  address: text(500, "The postal address, on one line."),
  email: emailAddress(),
  phone: z
    .string()
    .trim()
    .regex(/^\+?[0-9][0-9 ()./-]{4,30}$/, "A telephone number: digits, with an optional leading + and spaces, dots, dashes or brackets.")
    .meta({ description: "A telephone number buyers may call, ideally with its country code (+49 …)." }),
  tradeRegister: text(200, "The trade register the trader is entered in, when it is.").optional(),
  registrationNumber: text(100, "The trader's number in that register, or an equivalent identifier.").optional(),
};

export const traderDeclarationInputSchema = z
  .discriminatedUnion("trader", [
    z.strictObject({
      trader: z.literal(true),
      ...traderFields,
      selfCertification: z.literal(true).meta({ description: "The publisher certifies that it offers only products and services that comply with EU law (Art. 30(1)(e))." }),
    }),
    z.strictObject({ trader: z.literal(false).meta({ description: "A publisher that does not sell as a business (a private person): it may not set prices." }) }),
  ])
  .meta({ id: "TraderDeclarationInput" });

export const traderDeclarationSchema = z
  .discriminatedUnion("trader", [
    z.object({
      trader: z.literal(true),
      ...traderFields,
      tradeRegister: z.string().nullable(),
      registrationNumber: z.string().nullable(),
      selfCertification: z.literal(true),
      publisherId: z.string(),
      updatedAt: isoDateTime,
    }),
    z.object({ trader: z.literal(false), publisherId: z.string(), updatedAt: isoDateTime }),
  ])
  .meta({ id: "TraderDeclaration" });

/** What a paid module's page shows of its trader (Art. 31). */
export const moduleTraderSchema = z
  .object({ name: z.string(), address: z.string(), email: z.string(), phone: z.string() })
  .meta({ id: "ModuleTrader" });
