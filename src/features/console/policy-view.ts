/**
 * What applies to each tool, read from the live documents through the admin API and
 * checked with the same checkers the gateway uses: visibility (is it listed), a persona's
 * grant (may it be called), the filter set and rule (plan, then set), icons, text
 * overrides, rules and hints. For the Tools page's "view as persona" and the Personas
 * page's preview.
 */
import { checkFilterSet, checkPlan, type FilterPlan, type FilterSet } from "../filters/filter-set";
import { setNameFor } from "../filters/filter-store";
import { selectFilter } from "../filters/apply-filter";
import { checkIcons, type IconsDocument } from "../shaping/icons-document";
import { checkOverrides, type OverridesDocument } from "../shaping/overrides-document";
import { checkRules, hintsFor, rulesFor, type RulesDocument } from "../shaping/rules-document";
import { checkVisibility, isVisible, type Visibility } from "../personas/visibility-document";
import type { Grant } from "../../context/grant";
import { checkPersonas, permits, type Persona, type Personas } from "../personas/persona";
import { matchesGlob } from "../../core/glob";
import type { Checked } from "../../storage/document-store";
import type { AdminCall } from "../../admin/console/admin-client";
import type { CatalogEntry } from "../catalog/console-catalog";

/** The live documents that shape what a caller sees (missing or invalid ones read as absent). */
export type PolicyDocuments = {
  readonly personas: Personas;
  readonly visibility?: Visibility;
  readonly plan?: FilterPlan;
  readonly sets: ReadonlyMap<string, FilterSet>;
  readonly icons?: IconsDocument;
  readonly overrides?: OverridesDocument;
  readonly rules?: RulesDocument;
};

async function document<T>(
  call: AdminCall,
  path: string,
  check: (value: unknown) => Checked<T>,
): Promise<T | undefined> {
  const answer = await call("GET", path);
  if (!answer.ok) return undefined;
  const checked = check(answer.body);
  return checked.ok ? checked.value : undefined;
}

/** Reads every document that applies to tools, for the upstreams named. */
export async function readPolicy(call: AdminCall, upstreams: readonly string[]): Promise<PolicyDocuments> {
  const personasAnswer = await call("GET", "/personas");
  const personasChecked = checkPersonas((personasAnswer.body as { personas?: unknown } | null)?.personas ?? {});
  const [visibility, plan, icons, overrides, rules] = await Promise.all([
    document(call, "/visibility", checkVisibility),
    document(call, "/plan", checkPlan),
    document(call, "/icons", checkIcons),
    document(call, "/overrides", checkOverrides),
    document(call, "/rules", checkRules),
  ]);
  const names = new Set(
    upstreams.map((upstream) => setNameFor(plan, "", upstream).name).filter((name): name is string => name !== null),
  );
  const sets = new Map<string, FilterSet>();
  await Promise.all(
    [...names].map(async (name) => {
      const set = await document(call, `/filter-sets/${encodeURIComponent(name)}`, (value) =>
        checkFilterSet(name, value),
      );
      if (set) sets.set(name, set);
    }),
  );
  return {
    personas: personasChecked.ok ? personasChecked.value : {},
    sets,
    ...(visibility ? { visibility } : {}),
    ...(plan ? { plan } : {}),
    ...(icons ? { icons } : {}),
    ...(overrides ? { overrides } : {}),
    ...(rules ? { rules } : {}),
  };
}

/** What applies to one entry on /mcp, for a persona (or for everyone, with `persona` undefined). */
export type Applied = {
  readonly listed: boolean;
  readonly callable: boolean | undefined;
  readonly filter?: string;
  readonly icons: number;
  readonly override: boolean;
  readonly rules: readonly string[];
};

/** The grant of one persona on its own, as a caller it alone selects gets it. */
export function grantOf(name: string, persona: Persona): Grant {
  return {
    persona: name,
    allow: persona.allow,
    deny: persona.deny,
    ...(persona.rateLimit !== undefined ? { rateLimit: persona.rateLimit } : {}),
  };
}

/**
 * What applies to `entry` of `upstream` on /mcp. With a `grant` (the persona viewed as),
 * `listed` also needs the grant (lists show only what it permits) and `callable` says
 * whether it permits calls; without one, `callable` is undefined.
 */
export function appliedTo(entry: CatalogEntry, upstream: string, policy: PolicyDocuments, grant?: Grant): Applied {
  const callable = grant ? permits(grant, entry.key) : undefined;
  const listed = (!policy.visibility || isVisible(policy.visibility, entry.key)) && callable !== false;
  const setName = setNameFor(policy.plan, "", upstream).name;
  const set = setName === null ? undefined : policy.sets.get(setName);
  const selected = entry.kind === "tool" && set ? selectFilter(set, entry.key) : undefined;
  const icons = (policy.icons?.entries ?? []).filter(
    (icon) =>
      icon.kinds.includes(entry.kind) && (matchesGlob(icon.match, entry.key) || matchesGlob(icon.match, entry.name)),
  ).length;
  const table =
    entry.kind === "tool" ? policy.overrides?.tools : entry.kind === "prompt" ? policy.overrides?.prompts : undefined;
  const override = table !== undefined && Object.hasOwn(table, entry.key);
  const rules =
    entry.kind === "tool" && policy.rules
      ? [
          ...rulesFor(policy.rules, entry.key).map((rule) => `rule ${rule.name}`),
          ...hintsFor(policy.rules, entry.key).map(() => "hint"),
        ]
      : [];
  return {
    listed,
    callable,
    ...(selected && set ? { filter: `${set.name} / ${selected.key}${set.mode === "shadow" ? " (shadow)" : ""}` } : {}),
    icons,
    override,
    rules,
  };
}
