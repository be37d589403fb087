import type { ScimPatchOperation } from "scim-patch";
import { parseScim } from "./patch";
import { ScimError } from "./resources";
import { memberReferences } from "./schemas";

/**
 * A Group PATCH (§22, §25) split into what it does to the members and what it does to the other
 * attributes, so that the members it names are all the change reads: `add` and `remove` of
 * members name them (`members[value eq "…"]`, or a list, as Okta and Microsoft Entra ID send);
 * a `replace` of the members, or a `remove` of them all, makes the list whole (`reset`), which
 * only then is compared with the group's. Operations apply in order. Pure.
 */

export interface MembershipChange {
  /** The members are replaced whole by `add` (a replace, or a remove of all then adds). */
  reset: boolean;
  add: string[];
  remove: string[];
}

const GROUP_URN = /^urn:ietf:params:scim:schemas:core:2\.0:group:/i;
const MEMBERS = /^members$/i;
const ONE_MEMBER = /^members\[\s*value\s+eq\s+"([^"]*)"\s*\]$/i;

const uidsOf = (value: unknown) => parseScim(memberReferences, value).map((reference) => reference.value);

export function splitGroupPatch(operations: readonly ScimPatchOperation[]): { members: MembershipChange | null; attributes: ScimPatchOperation[] } {
  let reset = false;
  let touched = false;
  const add = new Set<string>();
  const remove = new Set<string>();
  const adding = (uids: string[]) => {
    for (const uid of uids) {
      add.add(uid);
      remove.delete(uid);
    }
  };
  // After a reset the list is `add` alone: a removal only takes from it.
  const removing = (uids: string[]) => {
    for (const uid of uids) {
      add.delete(uid);
      if (!reset) remove.add(uid);
    }
  };
  const replacing = (uids: string[]) => {
    reset = true;
    add.clear();
    remove.clear();
    adding(uids);
  };
  const attributes: ScimPatchOperation[] = [];
  for (const operation of operations) {
    const path = operation.path?.replace(GROUP_URN, "");
    if (path === undefined) {
      // A value object: its members, and the rest as an operation of its own.
      const { members, rest } = membersOf(operation);
      if (members !== undefined) {
        touched = true;
        if (operation.op === "add") adding(uidsOf(members));
        else replacing(uidsOf(members));
      }
      if (Object.keys(rest).length > 0) attributes.push({ ...operation, value: rest } as ScimPatchOperation);
      continue;
    }
    const one = ONE_MEMBER.exec(path);
    if (one) {
      if (operation.op !== "remove") throw new ScimError(400, "invalidPath", `'${operation.path}' names one member: only remove takes it; add members with path "members".`);
      touched = true;
      removing(uidsOf({ value: one[1] }));
      continue;
    }
    if (MEMBERS.test(path)) {
      touched = true;
      const value = (operation as { value?: unknown }).value;
      if (operation.op === "add") adding(uidsOf(value));
      else if (operation.op === "replace") replacing(uidsOf(value ?? []));
      else if (value === undefined) replacing([]);
      else removing(uidsOf(value));
      continue;
    }
    if (/^members\b/i.test(path)) throw new ScimError(400, "invalidPath", `'${operation.path}' is not a members path this server takes: use "members" or members[value eq "…"].`);
    attributes.push(operation);
  }
  return { members: touched ? { reset, add: [...add], remove: [...remove] } : null, attributes };
}

function membersOf(operation: ScimPatchOperation): { members: unknown; rest: Record<string, unknown> } {
  const value = (operation as { value?: unknown }).value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ScimError(400, "invalidValue", "An operation without a path needs a value object.");
  let members: unknown;
  const rest: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (MEMBERS.test(key.replace(GROUP_URN, ""))) members = entry;
    else rest[key] = entry;
  }
  return { members, rest };
}
