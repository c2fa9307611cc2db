/**
 * What each console page handler is given: the signed-in session (its CSRF token), the
 * admin API caller, the submitted form of a POST, and one way to answer with a page.
 */
import type { Context } from "hono";
import type { Hono } from "../hono-app";
import type { AdminCall } from "./admin-client";
import type { ConsoleSession } from "./session";

export type ConsoleBindings = {
  ADMIN_TOKEN?: string;
  SESSION_SECRET?: string;
  CONSOLE_ACCESS?: unknown;
  GATEWAY_KV?: KVNamespace;
  PAYLOADS?: R2Bucket;
  AUDIT_QUEUE?: Queue;
  [binding: string]: unknown;
};

/** A POST's fields: a urlencoded or multipart form. */
export type SubmittedForm = { get(name: string): string; file(name: string): File | undefined };

export type ConsoleEnv = {
  Bindings: ConsoleBindings;
  Variables: { session: ConsoleSession; call: AdminCall; form: SubmittedForm };
};

export type ConsoleContext = Context<ConsoleEnv>;
export type ConsoleApp = Hono<ConsoleEnv>;

/** Wraps FormData (or URLSearchParams) so a missing field reads as "" and a file field as a File. */
export function submittedForm(data: FormData | URLSearchParams): SubmittedForm {
  return {
    get: (name) => {
      const value = data.get(name);
      return typeof value === "string" ? value : "";
    },
    file: (name) => {
      const value = data instanceof FormData ? data.get(name) : null;
      return value !== null && typeof value !== "string" ? value : undefined;
    },
  };
}
