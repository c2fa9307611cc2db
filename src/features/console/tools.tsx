/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Tools: every tool, prompt and resource of each upstream, and what applies to each on
 * /mcp (including where its pin stands: under `enforce`, a held definition is not listed
 * or callable, and a held change leaves clients the approved text, which is what the page
 * shows, the change beside it: tools-served.tsx); with "view as persona", exactly what
 * that persona lists and may call.
 */
import { Fragment, h } from "../../admin/console/jsx";
import { gatewayConfig } from "../../config/gateway-config";
import type { ConsoleApp } from "../../admin/console/context";
import { upstreamCatalog, type CatalogEntry, type UpstreamCatalog } from "../catalog/console-catalog";
import { appliedTo, grantOf, readPolicy, type PolicyDocuments } from "./policy-view";
import type { Grant } from "../../context/grant";
import { Empty, href, Problems, TableHead } from "../../admin/console/layout";
import { renderPage } from "../../admin/console/render";
import { readPinsView, type PinsView, type PinView } from "../pins/pins-data";
import { ServedText, type EntryPin } from "./tools-served";
import { Visible } from "../../admin/console/visible-text";

/** The heading of the text column: what clients are served (under `enforce`, maybe not what the upstream lists). */
const TEXT_COLUMN = "Title and description clients get";

/** Where each pinned upstream's definitions stand: mode, and each pin by `<kind>:<name>`. */
export type PinStatuses = ReadonlyMap<string, { readonly mode: string; readonly pins: ReadonlyMap<string, PinView> }>;

/** The pins of a GET /admin/pins answer, by upstream. */
export function pinStatuses(view: PinsView): PinStatuses {
  const byId = (pins: readonly PinView[]) => new Map(pins.map((pin) => [`${pin.kind}:${pin.name}`, pin]));
  return new Map(view.upstreams.map((u) => [u.upstream, { mode: u.mode, pins: byId(u.definitions) }]));
}

/** The pin of an entry and its upstream's mode, if the upstream is pinned and has seen it. */
function entryPin(entry: CatalogEntry, upstream: string, pins: PinStatuses | undefined): EntryPin | undefined {
  const pinned = pins?.get(upstream);
  const pin = entry.kind === "resource" ? undefined : pinned?.pins.get(`${entry.kind}:${entry.name}`);
  return pinned && pin ? { mode: pinned.mode, pin } : undefined;
}

/** The Pin cell of an entry, and whether pinning keeps it from clients (held under enforce). */
function pinOf(
  entry: CatalogEntry,
  upstream: string,
  pins: PinStatuses | undefined,
): { text: string; held: boolean } | undefined {
  const pinned = pins?.get(upstream);
  if (!pinned || entry.kind === "resource") return undefined;
  const status = pinned.pins.get(`${entry.kind}:${entry.name}`)?.status;
  if (status === undefined) return { text: "not seen yet", held: false };
  return { text: `${status} (${pinned.mode})`, held: status === "held" && pinned.mode === "enforce" };
}

/** Yes / no as text (never colour alone). */
function yesNo(value: boolean): string {
  return value ? "yes" : "no";
}

/** The table of one upstream's entries, as `grant` (if any) sees them. */
export function CatalogTable({
  catalog,
  policy,
  grant,
  caption,
  pins,
}: {
  catalog: UpstreamCatalog;
  policy: PolicyDocuments;
  grant: Grant | undefined;
  caption: string;
  pins?: PinStatuses;
}) {
  if (catalog.entries.length === 0)
    return (
      <Empty>
        {catalog.error ? "Nothing could be listed." : `${catalog.upstream} offers no tools, prompts or resources.`}
      </Empty>
    );
  return (
    <table>
      <caption class="muted">{caption}</caption>
      <TableHead
        columns={[
          "Kind",
          "Name on /mcp",
          TEXT_COLUMN,
          "Listed",
          grant && "May call",
          pins && "Pin",
          "Filter",
          "Icons, overrides, rules",
        ]}
      />
      <tbody>
        {catalog.entries.map((entry) => {
          const applied = appliedTo(entry, catalog.upstream, policy, grant);
          const pin = pinOf(entry, catalog.upstream, pins);
          const listed = applied.listed && !pin?.held;
          const shaping = [
            applied.icons > 0 ? `${applied.icons} icon entr${applied.icons === 1 ? "y" : "ies"}` : "",
            applied.override ? "text override" : "",
            ...applied.rules,
          ].filter(Boolean);
          return (
            <tr data-key={entry.key} data-listed={yesNo(listed)}>
              <td>{entry.kind}</td>
              <td>
                <code>
                  <Visible text={entry.key} />
                </code>
              </td>
              <td>
                <ServedText entry={entry} pinned={entryPin(entry, catalog.upstream, pins)} />
              </td>
              <td>{yesNo(listed)}</td>
              {grant && <td>{yesNo(applied.callable === true && !pin?.held)}</td>}
              {pins && <td>{pin ? <a href={href("/pins")}>{pin.text}</a> : "—"}</td>}
              <td>{applied.filter ?? "none"}</td>
              <td>{shaping.length === 0 ? "none" : shaping.join(", ")}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Adds the Tools page. */
export function registerTools(app: ConsoleApp): void {
  app.get("/tools", async (c) => {
    const parsed = gatewayConfig(c.env).upstreams;
    const configured = parsed.ok ? parsed.value : [];
    const only = c.req.query("upstream") ?? "";
    const upstreams = only === "" ? configured : configured.filter((upstream) => upstream.name === only);
    const [catalogs, policy, pinsRead] = await Promise.all([
      Promise.all(upstreams.map((upstream) => upstreamCatalog(upstream, c.env))),
      readPolicy(
        c.var.call,
        upstreams.map((u) => u.name),
      ),
      readPinsView(c.var.call),
    ]);
    const pins = pinsRead.ok && pinsRead.pins.upstreams.length > 0 ? pinStatuses(pinsRead.pins) : undefined;
    const personaName = c.req.query("persona") ?? "";
    const persona =
      personaName !== "" && Object.hasOwn(policy.personas, personaName) ? policy.personas[personaName] : undefined;
    const grant = persona ? grantOf(personaName, persona) : undefined;
    const personaNames = Object.keys(policy.personas).sort();
    const body = (
      <>
        <form method="get" action={href("/tools")} class="row">
          <div>
            <label for="persona">View as persona</label>
            <select id="persona" name="persona">
              <option value="" selected={!persona}>
                (no persona: what the gateway offers)
              </option>
              {personaNames.map((name) => (
                <option value={name} selected={name === personaName}>
                  {name}
                </option>
              ))}
            </select>
          </div>
          {only !== "" && <input type="hidden" name="upstream" value={only} />}
          <button type="submit">View</button>
        </form>
        <Problems
          id="tools-errors"
          error={
            personaName !== "" && !persona
              ? `No persona named "${personaName}"`
              : !parsed.ok
                ? "UPSTREAMS is invalid; the gateway's log lists each problem"
                : !pinsRead.ok
                  ? `Pins could not be read (${pinsRead.error}): the text shown is the upstream's and the Listed column does not account for pinning`
                  : undefined
          }
        />
        {personaNames.length === 0 && (
          <p class="muted">
            No personas yet: <a href={href("/personas")}>create one</a> to see what its callers reach.
          </p>
        )}
        {upstreams.length === 0 && <Empty>No upstreams{only ? ` named "${only}"` : ""} are configured.</Empty>}
        {catalogs.map((catalog) => (
          <section aria-labelledby={`tools-${catalog.upstream}`}>
            <h2 id={`tools-${catalog.upstream}`}>{catalog.upstream}</h2>
            <Problems
              id={`tools-${catalog.upstream}-error`}
              error={catalog.error ? `Listing ${catalog.upstream} failed: ${catalog.error}` : undefined}
            />
            <CatalogTable
              catalog={catalog}
              policy={policy}
              grant={grant}
              pins={pins}
              caption={
                grant ? `As persona ${personaName} sees ${catalog.upstream}` : `Everything ${catalog.upstream} offers`
              }
            />
          </section>
        ))}
      </>
    );
    return renderPage(c, "Tools", "/tools", body);
  });
}
