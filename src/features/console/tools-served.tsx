/** @jsxRuntime classic */
/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The "Title and description" cell of the Tools page: what clients are served, not
 * what the upstream lists now. Under `enforce` a changed definition is held and clients
 * keep the approved one (its stored bytes), and a definition never approved is not
 * served at all; the upstream's current text is shown apart, marked as held, with its
 * findings' severities, so an operator never reads a held, poisoned description as the
 * one clients get. Under `warn` the change is served, marked as not reviewed. The pin
 * state comes from GET /admin/pins (pins-data.ts); all of it is upstream text.
 */
import { Fragment, h } from "../../admin/console/jsx";
import { isObject } from "../../core/jsonrpc";
import type { CatalogEntry } from "../catalog/console-catalog";
import { Findings } from "../pins/pins-change";
import type { PinView } from "../pins/pins-data";
import { SeverityBadges } from "../pins/pin-event-row";
import { Visible } from "../../admin/console/visible-text";

/** A pinned definition and its upstream's mode. */
export type EntryPin = { readonly mode: string; readonly pin: PinView };

/** Title and description of a definition (a catalog entry, or a stored one), each possibly absent. */
type Described = { readonly title?: string | undefined; readonly description?: string | undefined };

function describedOf(definition: unknown): Described {
  if (!isObject(definition)) return {};
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return { title: text(definition["title"]), description: text(definition["description"]) };
}

function DescribedText({ described }: { described: Described }) {
  const { title, description } = described;
  return (
    <>
      {title && (
        <strong>
          <Visible text={title} />
        </strong>
      )}
      {title && description ? " — " : ""}
      <Visible text={description ?? ""} />
    </>
  );
}

/** What an entry's pin means for clients: the served text's source, and the held or unreviewed change beside it. */
/** The text clients get (undefined: none), and the change a pin holds or serves unreviewed. */
type Served = { served: Described | undefined; change?: { label: string; pin: PinView } };

function servedOf(entry: CatalogEntry, pinned: EntryPin | undefined): Served {
  if (!pinned || entry.kind === "resource") return { served: entry };
  const { mode, pin } = pinned;
  const enforced = mode === "enforce";
  if (pin.status === "held" && enforced) {
    return { served: undefined, change: { label: "held, not served until approved", pin } };
  }
  if (pin.status === "pinned" || pin.pending === null) return { served: entry };
  if (enforced) {
    return {
      served: describedOf(pin.approved?.definition),
      change: { label: `change ${pin.status}: held, not served`, pin },
    };
  }
  const what = pin.status === "held" ? "not approved" : `change ${pin.status}`;
  return { served: entry, change: { label: `${what}: served without approval (${mode})`, pin } };
}

/**
 * The cell: the text clients are served (or that none is), then any change the pin
 * holds or serves unreviewed, with the upstream's current text and its findings.
 *
 * @example
 * <td><ServedText entry={entry} pinned={pins?.get(upstream)?.pins.get(`tool:${entry.name}`)} /></td>
 */
export function ServedText({ entry, pinned }: { entry: CatalogEntry; pinned: EntryPin | undefined }) {
  const { served, change } = servedOf(entry, pinned);
  const findings = change?.pin.pending?.findings ?? [];
  const heldText = change && pinned?.mode === "enforce";
  const lead = heldText ? "Clients get the approved definition: " : "Clients get: ";
  return (
    <>
      <div class="served" data-served={served ? "yes" : "no"}>
        {served ? (
          <>
            {change && <span class="muted">{lead}</span>}
            <DescribedText described={served} />
          </>
        ) : (
          <span class="muted">Clients get nothing: this definition is held until an operator approves it.</span>
        )}
      </div>
      {change && (
        <div class="held-change" data-pin-change={change.pin.status}>
          <span class="badge bad">{change.label}</span>{" "}
          {findings.length > 0 ? <SeverityBadges findings={findings} /> : <span class="muted">no findings</span>}
          {heldText && (
            <p>
              <span class="muted">The upstream now says: </span>
              <DescribedText described={entry} />
            </p>
          )}
          {findings.length > 0 && <Findings findings={findings} />}
        </div>
      )}
    </>
  );
}
