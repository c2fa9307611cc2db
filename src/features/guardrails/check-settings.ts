/**
 * A rule's pluggable checks as the document states them, checked: `webhook` (the operator's
 * service, asked by outside-checks.ts) and `model` (a Workers AI classifier). Both are off
 * unless a rule names them. What depends on the Worker (a secret that is set, the AI
 * binding, a loopback URL while the gateway runs locally) is checked on write, where the
 * admin request gives the Worker's bindings and URL; a stored document read back is checked
 * without them, and what is missing then is a failure of the check at call time.
 *
 * ```json
 * { "webhook": { "url": "https://checks.example.com/mcp", "secret": "CHECKS_TOKEN", "timeoutMs": 1500,
 *                "failure": "closed" } }
 * { "model": { "name": "@cf/meta/llama-guard-3-8b", "failure": "open" } }
 * ```
 */
import { isObject } from "../../core/jsonrpc";
import { at, unknownFields } from "../../storage/document-checks";
import type { DocumentProblem } from "../../storage/document-store";
import { isLoopback } from "../../upstream/oauth/http-options";

/** How long the gateway waits for a webhook's or model's verdict when a rule names no `timeoutMs`. */
export const DEFAULT_CHECK_TIMEOUT_MS = 2_000;
/** The longest `timeoutMs` a rule may give (a call waits this long at most per side). */
export const MAX_CHECK_TIMEOUT_MS = 10_000;
/** The Workers AI model a `model` check asks when it names none. */
export const DEFAULT_GUARD_MODEL = "@cf/meta/llama-guard-3-8b";
/** The binding a `model` check needs (wrangler.toml `[ai] binding = "AI"`). */
export const AI_BINDING = "AI";

/** What a failed check (deadline, network, an answer that is not a verdict) does: `closed` blocks, `open` lets by. */
export type CheckFailure = "open" | "closed";

export type WebhookCheck = {
  readonly url: string;
  /** The name of the Worker secret sent in `header` (never its value). */
  readonly secret?: string;
  /** The header carrying the secret: `authorization` (as `Bearer <secret>`) unless named. */
  readonly header: string;
  readonly timeoutMs: number;
  readonly failure: CheckFailure;
};

export type ModelCheck = { readonly name: string; readonly timeoutMs: number; readonly failure: CheckFailure };

/** What the admin request that writes a document knows of the Worker (absent: a stored document read back). */
export type WriteContext = { readonly env: Readonly<Record<string, unknown>>; readonly requestUrl: URL };

const FAILURES: readonly CheckFailure[] = ["open", "closed"];
const HEADER = /^[A-Za-z0-9-]{1,64}$/;

function common(value: Record<string, unknown>, path: string, problems: DocumentProblem[]) {
  const timeoutMs = value["timeoutMs"] ?? DEFAULT_CHECK_TIMEOUT_MS;
  if (
    typeof timeoutMs !== "number" ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 1 ||
    timeoutMs > MAX_CHECK_TIMEOUT_MS
  )
    problems.push({
      path: at(path, "timeoutMs"),
      message: `must be a whole number of ms from 1 to ${MAX_CHECK_TIMEOUT_MS}`,
    });
  const failure = value["failure"] ?? "closed";
  if (!FAILURES.includes(failure as CheckFailure))
    problems.push({ path: at(path, "failure"), message: '"closed" (a failed check blocks) or "open" (it lets by)' });
  return { timeoutMs: timeoutMs as number, failure: failure as CheckFailure };
}

function urlProblem(raw: unknown, context: WriteContext | undefined): string | undefined {
  const shape = "must be an https:// URL (http:// only to a loopback host, while the gateway itself runs locally)";
  if (typeof raw !== "string" || raw.length > 2048 || !URL.canParse(raw)) return shape;
  const url = new URL(raw);
  if (url.protocol === "https:") return url.username || url.password ? "must not carry a user or password" : undefined;
  if (url.protocol !== "http:" || !isLoopback(url)) return shape;
  return context && !isLoopback(context.requestUrl) ? shape : undefined;
}

/** The `webhook` of the rule at `path`, checked. */
export function checkWebhook(
  value: unknown,
  path: string,
  problems: DocumentProblem[],
  context: WriteContext | undefined,
): WebhookCheck | undefined {
  const shape = 'must be {"url", "secret"?: "NAME_OF_A_WORKER_SECRET", "header"?, "timeoutMs"?, "failure"?}';
  if (!isObject(value)) {
    problems.push({ path, message: shape });
    return undefined;
  }
  unknownFields(value, ["url", "secret", "header", "timeoutMs", "failure"], path, problems);
  const url = urlProblem(value["url"], context);
  if (url) problems.push({ path: at(path, "url"), message: url });
  const secret = value["secret"];
  if (secret !== undefined && (typeof secret !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(secret)))
    problems.push({ path: at(path, "secret"), message: "must be the name of a Worker secret" });
  else if (typeof secret === "string" && context) {
    const set = context.env[secret];
    if (typeof set !== "string" || set === "")
      problems.push({
        path: at(path, "secret"),
        message: `no Worker secret named "${secret}" is set (wrangler secret put ${secret})`,
      });
  }
  const header = value["header"] ?? "authorization";
  if (typeof header !== "string" || !HEADER.test(header))
    problems.push({ path: at(path, "header"), message: "must be a header name (letters, digits, '-')" });
  return {
    url: value["url"] as string,
    ...(typeof secret === "string" ? { secret } : {}),
    header: (header as string).toLowerCase(),
    ...common(value, path, problems),
  };
}

/** The `model` of the rule at `path`, checked; refused on write when the Worker has no AI binding. */
export function checkModel(
  value: unknown,
  path: string,
  problems: DocumentProblem[],
  context: WriteContext | undefined,
): ModelCheck | undefined {
  if (!isObject(value)) {
    problems.push({ path, message: 'must be {"name"?: "@cf/...", "timeoutMs"?, "failure"?}' });
    return undefined;
  }
  unknownFields(value, ["name", "timeoutMs", "failure"], path, problems);
  const name = value["name"] ?? DEFAULT_GUARD_MODEL;
  if (typeof name !== "string" || !/^@[A-Za-z0-9@/._-]{1,128}$/.test(name))
    problems.push({ path: at(path, "name"), message: "must be a Workers AI model name (@cf/...)" });
  const binding = context?.env[AI_BINDING];
  if (context && !(isObject(binding) && typeof binding["run"] === "function"))
    problems.push({
      path,
      message:
        `this Worker has no Workers AI binding named "${AI_BINDING}" ([ai] binding = "${AI_BINDING}" in ` +
        "wrangler.toml), so no model can check this rule; bind it, or drop the model",
    });
  return { name: name as string, ...common(value, path, problems) };
}
