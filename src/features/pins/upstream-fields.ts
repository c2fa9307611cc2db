/**
 * Pinning's fields of an upstream in UPSTREAMS: `pinning` ("off", "warn" or "enforce";
 * absent: warn, `pinningOf`) and `approveNew`. The composition root (src/gateway.ts) adds
 * them to the upstream parser, which imports no feature.
 */
import type { UpstreamSection } from "../../config/upstreams";
import { DEFAULT_PINNING_MODE, PINNING_MODES, type PinningMode } from "./pins";

declare module "../../config/upstreams" {
  interface UpstreamSections {
    /** Tool pinning (features/pins/pins.ts): "off", "warn" or "enforce"; absent: warn (`pinningOf`). */
    readonly pinning?: PinningMode;
    /** Pinning: a definition seen for the first time waits for an operator's approval instead of being trusted on first use. */
    readonly approveNew?: boolean;
  }
}

/** `pinning` and `approveNew`, checked; each problem is pushed to `problems`. */
export const PINNING_FIELDS: UpstreamSection = {
  fields: ["pinning", "approveNew"],
  parse: (raw, at, problems) => {
    const pinning = raw["pinning"];
    if (pinning !== undefined && !(PINNING_MODES as readonly unknown[]).includes(pinning)) {
      problems.push(
        `${at}.pinning: must be one of ${PINNING_MODES.map((m) => JSON.stringify(m)).join(", ")} (default "${DEFAULT_PINNING_MODE}")`,
      );
    }
    const approveNew = raw["approveNew"];
    if (approveNew !== undefined && typeof approveNew !== "boolean")
      problems.push(`${at}.approveNew: must be true or false`);
    return {
      ...(pinning !== undefined ? { pinning: pinning as PinningMode } : {}),
      ...(approveNew === true ? { approveNew: true } : {}),
    };
  },
};
