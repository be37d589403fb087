import type { z } from "zod";
import { isAlreadyExists } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { findUser } from "../accounts/identity";
import { businessStore } from "../accounts/business-store";
import { createBusinessInput, memberInput, removeMemberInput } from "./schemas";

/** Operators (and billing): businesses and who belongs to them. */

const noBusiness = (businessId: string) => new ApiError("business_not_found", `No business '${businessId}'.`);

export async function createBusiness({ db }: OperatorDeps, input: z.input<typeof createBusinessInput>) {
  const { id, name } = parseInput(createBusinessInput, input);
  try {
    await businessStore(db).create(id, name);
  } catch (error) {
    if (isAlreadyExists(error)) throw new ApiError("business_exists", `Business '${id}' exists.`);
    throw error;
  }
  return { id, name, members: 0 };
}

export async function addMember({ db, auth }: OperatorDeps, input: z.input<typeof memberInput>) {
  const { id, user: reference, role } = parseInput(memberInput, input);
  const user = await findUser(auth, reference);
  const businesses = businessStore(db);
  await db.runTransaction(async (tx) => {
    if (!businesses.read(await tx.get(businesses.ref(id)))) throw noBusiness(id);
    businesses.setMember(tx, id, user.uid, role);
  });
  return { businessId: id, uid: user.uid, email: user.email, role };
}

export async function removeMember({ db, auth }: OperatorDeps, input: z.input<typeof removeMemberInput>) {
  const { id, user: reference } = parseInput(removeMemberInput, input);
  const user = await findUser(auth, reference);
  const businesses = businessStore(db);
  await db.runTransaction(async (tx) => {
    const business = businesses.read(await tx.get(businesses.ref(id)));
    if (!business) throw noBusiness(id);
    if (!business.memberIds.includes(user.uid)) throw new ApiError("membership_not_found", `${user.email ?? user.uid} is not a member of '${id}'.`);
    businesses.removeMember(tx, id, user.uid);
  });
  return { businessId: id, uid: user.uid, email: user.email, removed: true };
}
