/** @jsxRuntime classic */
/** @jsx h */
/**
 * One pinned definition's change as the Pins page shows it: the version shown (its
 * digest), its findings with their severity, the admin API's diff against the approved
 * version, Approve and Reject buttons that send that digest, and the place where the
 * API's answer about the definition (a 409 when the upstream changed again) is shown.
 * All of it is upstream text, rendered as text with its invisible characters shown.
 */
import { h } from "../../admin/console/jsx";
import { CsrfField, href, TableHead, Time } from "../../admin/console/layout";
import type { PinFindingView, PinView } from "./pins-data";
import { Visible, VisibleValue } from "../../admin/console/visible-text";

/** An answer of the admin API shown next to the definition it was about. */
export type Shown = { upstream: string; kind: string; name: string; error: string };

/** Whether `shown` is about this definition of `upstream`. */
export function sameDefinition(shown: Shown | undefined, upstream: string, pin: PinView): boolean {
  return shown !== undefined && shown.upstream === upstream && shown.kind === pin.kind && shown.name === pin.name;
}

/** A definition's findings: severity (as text, not colour alone), rule, where, what matched. */
export function Findings({ findings }: { findings: readonly PinFindingView[] }) {
  if (findings.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="findings">
      {findings.map((finding) => (
        <li data-rule={finding.rule}>
          <span class={`badge severity-${finding.severity === "high" ? "high" : "other"}`}>{finding.severity}</span>{" "}
          {finding.rule} at <code>{finding.at || "/"}</code>:{" "}
          <code class="match">
            <Visible text={finding.match} />
          </code>
        </li>
      ))}
    </ul>
  );
}

function Diff({ pending, label }: { pending: NonNullable<PinView["pending"]>; label: string }) {
  if (!pending.diff) return <p class="muted">No diff: the new definition is not a JSON object.</p>;
  return (
    <table class="diff">
      <caption class="muted">{label}</caption>
      <TableHead columns={["Where", "Change", "Before", "After"]} />
      <tbody>
        {pending.diff.changes.map((entry) => (
          <tr>
            <td>
              <code>
                <Visible text={entry.path} />
              </code>
            </td>
            <td>{entry.change}</td>
            <td>
              {"before" in entry ? (
                <pre>
                  <VisibleValue value={entry.before} />
                </pre>
              ) : (
                <span class="muted">(absent)</span>
              )}
            </td>
            <td>
              {"after" in entry ? (
                <pre>
                  <VisibleValue value={entry.after} />
                </pre>
              ) : (
                <span class="muted">(absent)</span>
              )}
            </td>
          </tr>
        ))}
        {pending.diff.more > 0 && (
          <tr>
            <td colspan={4} class="muted">{`${pending.diff.more} more changes not listed`}</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

const STATUS_TEXT: Readonly<Record<string, string>> = {
  pending: "changed: awaiting approval",
  held: "new: held until approved",
  rejected: "rejected: clients keep the approved version until the upstream changes again",
};

/** A definition that is not simply pinned: what changed, its findings, and the decision buttons. */
export function PendingChange({
  upstream,
  pin,
  csrf,
  shown,
  id,
}: {
  upstream: string;
  pin: PinView;
  csrf: string;
  shown: Shown | undefined;
  id: string;
}) {
  const pending = pin.pending!;
  const what = `${pin.kind} ${pin.name}`;
  return (
    <article
      class="card change"
      id={id}
      data-pin={`${upstream}/${pin.kind}/${pin.name}`}
      data-status={pin.status}
      aria-labelledby={`${id}-title`}
    >
      <h4 id={`${id}-title`}>
        {pin.kind}{" "}
        <code>
          <Visible text={pin.name} />
        </code>{" "}
        <span class={`badge ${pin.status === "rejected" ? "" : "bad"}`}>{STATUS_TEXT[pin.status] ?? pin.status}</span>
      </h4>
      <dl>
        <dt>Version shown</dt>
        <dd>
          <code class="digest">{pending.digest}</code>
        </dd>
        <dt>First seen</dt>
        <dd>
          <Time iso={pending.seenAt} />
        </dd>
        <dt>Approved version</dt>
        <dd>{pin.approved ? <code class="digest">{pin.approved.digest}</code> : "none"}</dd>
        <dt>Findings</dt>
        <dd>
          <Findings findings={pending.findings} />
        </dd>
      </dl>
      <Diff
        pending={pending}
        label={`What changed in ${pin.kind} ${pin.name}${pin.approved ? " since the approved version" : " (no approved version)"}`}
      />
      <form method="post" action={href("/pins/decide")} class="row">
        <CsrfField csrf={csrf} />
        <input type="hidden" name="upstream" value={upstream} />
        <input type="hidden" name="kind" value={pin.kind} />
        <input type="hidden" name="name" value={pin.name} />
        <input type="hidden" name="digest" value={pending.digest} />
        <button
          type="submit"
          name="verdict"
          value="approve"
          aria-label={`Approve ${what} of ${upstream}`}
          aria-describedby={`${id}-result`}
        >
          Approve
        </button>
        <button
          type="submit"
          name="verdict"
          value="reject"
          class="danger"
          aria-label={`Reject ${what} of ${upstream}`}
          aria-describedby={`${id}-result`}
        >
          Reject
        </button>
      </form>
      <Decision id={`${id}-result`} shown={sameDefinition(shown, upstream, pin) ? shown : undefined} />
    </article>
  );
}

/** Where the API's answer to a decision or a forget about this definition is shown. */
export function Decision({ id, shown }: { id: string; shown: Shown | undefined }) {
  if (!shown) return <div id={id}></div>;
  return (
    <div id={id} class="problems" role="alert">
      <p>{shown.error}</p>
      <p>
        <a href={href("/pins")}>Reload the Pins page</a>
      </p>
    </div>
  );
}
