// Package securitytest is the security suite, in tests only: what each
// credential (API key, JWT, signed URL) opens on every route, REST and
// GraphQL, in every state (valid, expired, tampered, revoked, suspended,
// lacking the permission, signed with another algorithm); request bodies
// over the limit; Redis going away and coming back under load.
//
// It is a room of its own because it needs the whole server, wired as
// `cnpjgraph serve` wires it (rest, graphqlapi, auth, the service and its
// providers), which none of those rooms holds on its own.
package securitytest
