/**
 * The order of the method middleware, outermost first, in one place.
 *
 * A response travels from the relay outwards, so the list reads backwards for results:
 * output filters shape a result first, then offload sees the filtered size and stores
 * the filtered data, and the gateway's own tools answer before anything is forwarded.
 * Task results, which no filter can be chosen for, are withheld where a set may apply.
 * Later layers (visibility, authorization, audit) go in front, in that order.
 */
import type { Middleware } from "./chain";
import { offload } from "./offload";
import { outputFilters } from "./output-filters";
import { sysTools } from "./sys-tools";
import { taskResults } from "./task-results";

export const METHOD_MIDDLEWARE: readonly Middleware[] = [sysTools(), offload(), outputFilters(), taskResults()];
