import type { SignedInApi } from "../api";

/** What a business panel's sections share: the API, the business, and the panel's one action runner, confirmation and reload. */
export interface PanelActions {
  api: SignedInApi;
  businessId: string;
  /** Runs an action, announcing its outcome (ui/use-action.ts). */
  run: (action: () => Promise<string>) => Promise<void>;
  /** Asks before destroying (ui/confirm.tsx). */
  confirm: (question: { title: string; detail: string; action: string }) => Promise<boolean>;
  reload: () => Promise<void>;
}
