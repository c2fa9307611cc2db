/**
 * The order of the method middleware, outermost first, in one place.
 *
 * Policy layers (visibility, authorization, audit, output filters, offload) are added
 * here as they land, in that order: visibility hides before anyone is authorized,
 * audit sees the final outcome, filters run before offload so offload sees the
 * filtered size. The relay to upstreams is always the centre.
 */
import type { Middleware } from "./chain";
import { outputFilters } from "./output-filters";

export const METHOD_MIDDLEWARE: readonly Middleware[] = [outputFilters()];
