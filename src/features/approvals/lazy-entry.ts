/**
 * What approvals-module.mjs exports (scripts/build-yaml-module.mjs bundles this file): the
 * held call's steps its object runs, the gate a held call passes, the approvers' API and the
 * console page. Loaded by load.ts on first use in an isolate.
 */
export { askCall, decideCall, readCall, waitForDecision } from "./held-calls";
export { holdForApproval } from "./gate";
export { answerApprover } from "./approver-api";
export { approvalsPage, decideFromConsole } from "./console-page";
