/**
 * What the user credentials feature loads on demand (user-credentials-module.mjs, built by
 * scripts/build-yaml-module.mjs; storage/user-credentials-library.ts imports it): the token
 * exchange and the key page, which only isolates serving such upstreams or that page need.
 * Nothing here holds the gateway's state: the main module passes in what they need.
 */
export { exchangedToken, forgetExchanged } from "./token-exchange";
export { keyRoute } from "./key-page";
