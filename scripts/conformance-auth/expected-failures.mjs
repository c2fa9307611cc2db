/**
 * The client authorization scenarios (./leg.mjs) the gateway is known to fail, and why:
 * per scenario, the checks it may fail (`(client)`: the scripted client could not complete
 * its tool call), with the reason. docs/upstream-sign-in.md shows the same list as a table.
 * An entry goes when the gateway passes: a listed check that passes fails the run until it
 * is removed here, so the list only shrinks; a check failing that is not listed fails it too.
 *
 */

/** src/upstream/oauth/registration.ts: oauth4webapi refuses the registration answer. */
const SECRET_WITHOUT_EXPIRY =
  'dynamic client registration fails: the authorization server issues a client_secret without ' +
  'client_secret_expires_at (RFC 7591 §3.2.1 makes it required), and oauth4webapi refuses such an answer, ' +
  'so the sign-in ends at "Sign-in could not start" (502)';
/** src/upstream/oauth/registration.ts: the registration request has no application_type. */
const NO_APPLICATION_TYPE = 'the registration request names no application_type (SEP-837: MUST at 2026-07-28)';
/** src/upstream/client.ts (no request without a token) and src/upstream/oauth/discovery.ts. */
const NO_CHALLENGE_READ =
  'a first sign-in never reads the upstream\'s 401: without a token the gateway asks the user at once, so ' +
  'resource_metadata and scope of WWW-Authenticate are unknown, and the protected resource metadata is looked ' +
  'for only at the path-based well-known URI (no fallback to the root one)';
/** The suite's harness: its own example clients hard-code this URL. */
const SUITE_CIMD_URL =
  'the scenario warns unless the client id is the suite\'s own ' +
  'https://conformance-test.local/client-metadata.json; ' +
  'the gateway\'s is the URL of its own document';
/** The suite's authorization server, with oauth4webapi's encoding (panva/oauth4webapi#199). */
const BASIC_NOT_DECODED =
  'the scenario\'s authorization server compares the HTTP Basic credentials without form-decoding them; ' +
  'the gateway (oauth4webapi) form-encodes them as RFC 6749 §2.3.1 says, "-" as "%2D"';

const REGISTRATION_FAILS = `${SECRET_WITHOUT_EXPIRY}; ${NO_APPLICATION_TYPE}`;
/** What a scenario whose server issues a client secret fails: SEP-837, `checks` (never reached), the client. */
const stopsAtRegistration = (checks, { clientMayFail = false } = {}) => ({
  checks: ['sep-837-application-type-present', ...checks, ...(clientMayFail ? [] : ['(client)'])],
  reason: REGISTRATION_FAILS,
});
/** The checks of an authorization and a token request that never happened. */
const RESOURCE = ['resource-parameter-in-authorization', 'resource-parameter-in-token'];
const NO_FLOW = ['authorization-request', 'token-request', ...RESOURCE];
/** A first sign-in that cannot find the protected resource metadata: nothing after it happens. */
const NO_METADATA = {
  checks: ['authorization-server-metadata', 'client-registration', ...NO_FLOW, '(client)'],
  reason: NO_CHALLENGE_READ,
};

/** @type {Record<string, { checks: string[], reason: string }>} */
export const EXPECTED_FAILURES = {
  'auth/metadata-default': stopsAtRegistration(NO_FLOW),
  'auth/metadata-var1': stopsAtRegistration(NO_FLOW),
  'auth/metadata-var2': NO_METADATA,
  'auth/metadata-var3': NO_METADATA,
  'auth/basic-cimd': { checks: ['cimd-client-id-used'], reason: SUITE_CIMD_URL },
  'auth/scope-from-www-authenticate': stopsAtRegistration(['scope-from-www-authenticate']),
  'auth/scope-from-scopes-supported': stopsAtRegistration(['scope-from-scopes-supported']),
  'auth/scope-omitted-when-undefined': stopsAtRegistration(['scope-omitted-when-undefined']),
  'auth/scope-step-up': stopsAtRegistration([
    'scope-step-up-initial',
    'scope-step-up-escalation',
    'sep-2350-scope-union-on-reauth',
  ]),
  'auth/scope-retry-limit': stopsAtRegistration(['scope-retry-limit'], { clientMayFail: true }),
  'auth/token-endpoint-auth-basic': stopsAtRegistration(['token-endpoint-auth-method', ...RESOURCE]),
  'auth/token-endpoint-auth-post': stopsAtRegistration(['token-endpoint-auth-method', ...RESOURCE]),
  // A public client is issued no secret: it registers and signs in, and only SEP-837's check fails.
  'auth/token-endpoint-auth-none': { checks: ['sep-837-application-type-present'], reason: NO_APPLICATION_TYPE },
  'auth/pre-registration': { checks: ['pre-registration-auth', '(client)'], reason: BASIC_NOT_DECODED },
  'auth/offline-access-not-supported': stopsAtRegistration(['sep-2207-offline-access-not-requested']),
  'auth/authorization-server-migration': stopsAtRegistration(['sep-2352-reregister-on-as-change']),
  'auth/iss-supported': stopsAtRegistration(['sep-2468-client-compare-iss-supported']),
  'auth/iss-not-advertised': stopsAtRegistration(['sep-2468-client-proceed-no-iss']),
  'auth/iss-supported-missing': stopsAtRegistration(['sep-2468-client-reject-missing-iss'], { clientMayFail: true }),
  'auth/iss-wrong-issuer': stopsAtRegistration(['sep-2468-client-compare-iss-supported'], { clientMayFail: true }),
  'auth/iss-unexpected': stopsAtRegistration(['sep-2468-client-compare-iss-unadvertised'], { clientMayFail: true }),
  'auth/iss-normalized': stopsAtRegistration(['sep-2468-client-no-normalization'], { clientMayFail: true }),
};
