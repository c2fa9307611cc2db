/**
 * The order of the method middleware, outermost first, in one place.
 *
 * A response travels from the relay outwards, so the list reads backwards for results:
 * output filters shape a result first, then offload sees the filtered size and stores
 * the filtered data, and the gateway's own tools answer before anything is forwarded.
 * Task results, which no filter can be chosen for, are withheld where a set may apply.
 * Later layers (visibility, authorization, audit) go in front, in that order.
 */
import type { Middleware } from "../context/call-context";
import { offload } from "../middleware/offload";
import { outputFilters } from "../middleware/output-filters";
import { sysTools } from "../middleware/sys-tools";
import { taskResults } from "../middleware/task-results";

export const METHOD_MIDDLEWARE: readonly Middleware[] = [sysTools(), offload(), outputFilters(), taskResults()];
