/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The Overview's warning about callers who can call nothing: with AUTH on, authorization
 * is default-deny, so a gateway with no persona (or an invalid personas document) denies
 * every caller, and an API key whose roles select no persona (none being the default)
 * lists no tools and gets "Unknown tool" for every call. Nothing tells the caller why; this
 * tells the operator. Keys are read from the first page of the listing (up to 1,000).
 */
import { Fragment, h } from "../../admin/console/jsx";
import type { AuthConfig } from "../../config/auth-config";
import { isObject } from "../../core/jsonrpc";
import { checkPersonas } from "../personas/persona";
import { noGrantCause } from "../personas/persona-grant";
import type { AdminCall } from "../../admin/console/admin-client";
import { href } from "../../admin/console/layout";

/** Keys named one by one; the rest are counted. */
const MAX_KEYS_SHOWN = 20;

type KeyWithoutPersona = { readonly principal: string; readonly roles: readonly string[] };

/** What the Overview warns about (nothing with AUTH off). */
export type AccessWarningsData = {
  readonly noPersona: boolean;
  readonly invalid: boolean;
  readonly keys: readonly KeyWithoutPersona[];
};

function keysOf(body: unknown): KeyWithoutPersona[] {
  const listed = isObject(body) && Array.isArray(body["apiKeys"]) ? body["apiKeys"] : [];
  return listed.flatMap((key: unknown) => {
    if (!isObject(key) || typeof key["principal"] !== "string" || !Array.isArray(key["roles"])) return [];
    const roles = key["roles"].filter((role): role is string => typeof role === "string");
    return [{ principal: key["principal"], roles }];
  });
}

/**
 * Reads the personas and the API keys through the admin API; undefined when there is
 * nothing to judge (AUTH off, a read failed).
 */
export async function readAccessWarnings(
  call: AdminCall,
  auth: AuthConfig | undefined,
): Promise<AccessWarningsData | undefined> {
  if (auth?.mode !== "on") return undefined;
  const answer = await call("GET", "/personas");
  if (!answer.ok || !isObject(answer.body)) return undefined;
  if (answer.body["invalid"] !== undefined) return { noPersona: false, invalid: true, keys: [] };
  const checked = checkPersonas(answer.body["personas"] ?? {});
  if (!checked.ok) return { noPersona: false, invalid: true, keys: [] };
  if (Object.keys(checked.value).length === 0) return { noPersona: true, invalid: false, keys: [] };
  if (!auth.apiKeys) return { noPersona: false, invalid: false, keys: [] };
  const keys = await call("GET", "/api-keys?limit=1000");
  if (!keys.ok) return undefined;
  const without = keysOf(keys.body).filter((key) => noGrantCause(checked.value, key.roles) !== undefined);
  return { noPersona: false, invalid: false, keys: without };
}

/** The warning, or nothing when every caller has a persona. */
export function AccessWarnings({ data }: { data: AccessWarningsData | undefined }) {
  // biome-ignore lint/complexity/noUselessFragments: the page part renders as nothing, and stays an element.
  if (!data || (!data.noPersona && !data.invalid && data.keys.length === 0)) return <></>;
  const personas = <a href={href("/personas")}>Personas</a>;
  return (
    <section id="access-warnings" class="problems" role="status" aria-labelledby="access-warnings-title">
      <h2 id="access-warnings-title">Callers who can call nothing</h2>
      {data.noPersona && (
        <p data-access-warning="no persona defined">
          No persona is defined. With AUTH on, authorization is default-deny: every caller lists no tools and every call
          is "Unknown tool". Add a persona on the {personas} page.
        </p>
      )}
      {data.invalid && (
        <p data-access-warning="personas document invalid">
          The personas document is invalid, which denies every caller: the {personas} page shows its problems.
        </p>
      )}
      {data.keys.length > 0 && (
        <>
          <p data-access-warning="no persona for roles">
            {`${data.keys.length} API key${data.keys.length === 1 ? "'s" : "s'"} roles select no persona, `}
            and no persona is the default: their callers list no tools and every call is "Unknown tool". Give a persona
            one of their roles on the {personas} page, or mark one the default.
          </p>
          <ul>
            {data.keys.slice(0, MAX_KEYS_SHOWN).map((key) => (
              <li>
                <code>{key.principal}</code> ({key.roles.length === 0 ? "no roles" : `roles: ${key.roles.join(", ")}`})
              </li>
            ))}
            {data.keys.length > MAX_KEYS_SHOWN && <li>{`and ${data.keys.length - MAX_KEYS_SHOWN} more`}</li>}
          </ul>
        </>
      )}
    </section>
  );
}
