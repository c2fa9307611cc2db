/**
 * AUTH.signIn against the operator's provider of the tests (test/fixtures/operator-idp.ts),
 * the same in workerd (client-sign-in.ts) and under `npm start` (node/sign-in-gateway.ts):
 * users of example.test may sign in, their roles from the `groups` claim, the client's id and
 * secret in the secrets SIGN_IN_CLIENT_ID and SIGN_IN_CLIENT_SECRET.
 */
export function operatorSignIn(issuer: string) {
  return {
    issuer,
    clientId: "SIGN_IN_CLIENT_ID",
    clientSecret: "SIGN_IN_CLIENT_SECRET",
    allowedDomains: ["example.test"],
    rolesClaim: "groups",
    scopes: ["groups"],
  };
}
