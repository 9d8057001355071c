// An OAuth 2.1 authorization server for mcpd's OAuth tests: oidc-provider
// (panva's, certified OpenID Provider; tests/package.json pins it), set up
// as the authorization server of MCP resource servers.  Plain HTTP on
// 127.0.0.1 alone: all an issuer needs in tests.
//
//	node oauth-provider.mjs --resource URL [--resource URL ...]
//	    [--port N] [--alg ES256|RS256|EdDSA] [--ttl SECONDS]
//	    [--client-id ID] [--client-secret SECRET]
//	    [--jwks-out FILE] [--keys-out FILE] [--quiet]
//
// Once it listens it prints one JSON line on stdout (nothing else goes to
// stdout; its log, one line a request, goes to stderr):
//	{"issuer": "http://127.0.0.1:PORT", "port": PORT,
//	 "metadata": ISSUER/.well-known/openid-configuration,
//	 "jwks_uri": ISSUER/jwks, "authorization_endpoint": ISSUER/auth,
//	 "token_endpoint": ISSUER/token, "registration_endpoint": ISSUER/reg,
//	 "introspection_endpoint": ..., "resources": [the --resource URLs],
//	 "decoy_resource": "https://decoy.invalid/mcp", "scopes": [...],
//	 "alg": the access tokens' alg, "kid": the kid they are signed with,
//	 "kids": {"ES256": kid, "RS256": kid, "EdDSA": kid},
//	 "client_id": ..., "client_secret": ..., "ttl": SECONDS,
//	 "jwks_file": FILE or null, "keys_file": FILE or null}
// It runs until killed (SIGTERM or SIGINT: it closes and exits 0).
//
// What it serves:
//  - RFC 8707 resource indicators: each --resource URL (and the decoy, for
//    tokens of the wrong audience) is a resource server whose access tokens
//    are JWTs (RFC 9068) signed with --alg, for the scopes mcp:tools and
//    mcp:other.  A client must name the resource: there is no default
//    one, and a token request with no resource gets an opaque token only
//    good at the userinfo endpoint (or, with an authorization code or
//    refresh token, the resource of the grant: useGrantedResource).  An
//    unknown resource is invalid_target.
//  - The authorization code grant with PKCE required of every client
//    (oidc-provider requires it of public clients alone by default), S256
//    only; refresh tokens to clients registered for them (offline_access
//    need not be asked for).  Logins and consent are oidc-provider's own
//    development pages (devInteractions): a form that takes any login and
//    password, then a consent form; oauth.mjs fills them in with fetch.
//  - Dynamic client registration (RFC 7591) at /reg, open: no initial
//    access token.
//  - The client credentials grant, for the static client --client-id /
//    --client-secret (mcpd-test / mcpd-secret), client_secret_basic or
//    client_secret_post, allowed scopes mcp:tools and mcp:other.
//  - Token introspection (RFC 7662) and revocation, for clients.
//  - A key set made at start with jose: one key each for ES256 (P-256),
//    RS256 (2048 bits) and EdDSA (Ed25519), kid = the RFC 7638 thumbprint,
//    "alg" and "use": "sig" in each JWK; all three are in the JWKS at
//    ISSUER/jwks, --alg picks the one access tokens are signed with.
//    --jwks-out writes the public JWKS to a file (for mcpd's "keys from a
//    file"); --keys-out writes the private one, mode 0600, for
//    oauth-tokens.mjs to forge hostile tokens with (put it in a temp dir).
// Nothing here mints a token outside OAuth.
//
// What its access tokens look like (client_credentials, --alg ES256,
// resource=https://127.0.0.1:8443/mcp, scope=mcp:tools):
//	header:  {"alg":"ES256","typ":"at+jwt","kid":"<thumbprint>"}
//	payload: {"jti":"<43 chars>","sub":"mcpd-test","iat":1700000000,
//	    "exp":1700000300,"scope":"mcp:tools","client_id":"mcpd-test",
//	    "iss":"http://127.0.0.1:PORT","aud":"https://127.0.0.1:8443/mcp"}
// aud is a string (one resource per token), scope a space-separated
// string claim, absent when no scope was granted.  With the client
// credentials grant sub is the client_id; with the authorization code
// grant it is the account id, the login typed in the dev form ("alice"),
// and client_id is the dynamically registered client's (a random id).
// The token response: {"access_token", "expires_in": --ttl, "token_type":
// "Bearer", "scope": "mcp:tools"} (and "refresh_token" for the code grant).
//
// Of note in oidc-provider 9.13.3:
//  - a token request without resource (client credentials included) gets
//    an opaque 43-character token, not a JWT, whatever the scope;
//  - a scope it does not know (mcp:bogus) is dropped, not invalid_scope:
//    the token has no scope claim; scopes the static client is not
//    allowed (openid) are invalid_scope;
//  - the static client registered client_secret_basic may as well use
//    client_secret_post;
//  - it serves its metadata at both /.well-known/openid-configuration and
//    /.well-known/oauth-authorization-server (RFC 8414), the same document;
//    code_challenge_methods_supported is ["S256"] alone;
//  - the authorization response carries iss (RFC 9207);
//  - an unknown resource is invalid_target at /auth and /token alike.
//
// Proved with (Node 22 from tests/node_modules):
//	node oauth-provider.mjs --resource https://127.0.0.1:8443/mcp \
//	    --jwks-out /tmp/x/jwks.json --keys-out /tmp/x/keys.json &
//	curl -s -u mcpd-test:mcpd-secret http://127.0.0.1:PORT/token \
//	    -d grant_type=client_credentials \
//	    -d resource=https://127.0.0.1:8443/mcp -d scope=mcp:tools
// and oauth-selftest.mjs runs it with the rest.

import fs from 'node:fs';
import http from 'node:http';
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import Provider, { errors } from 'oidc-provider';
import * as jose from 'jose';

// oidc-provider prints its notices with console.info: stdout is for the
// ready line alone.
console.info = console.log = (...a) => console.error(...a);

const { values: o } = parseArgs({
	options: {
		port: { type: 'string', default: '0' },
		resource: { type: 'string', multiple: true, default: [] },
		alg: { type: 'string', default: 'ES256' },
		ttl: { type: 'string', default: '300' },
		'client-id': { type: 'string', default: 'mcpd-test' },
		'client-secret': { type: 'string', default: 'mcpd-secret' },
		'jwks-out': { type: 'string' },
		'keys-out': { type: 'string' },
		quiet: { type: 'boolean', default: false },
	},
});

const DECOY = 'https://decoy.invalid/mcp';
const SCOPES = ['mcp:tools', 'mcp:other'];
const ALGS = ['ES256', 'RS256', 'EdDSA'];
const alg = o.alg === 'Ed25519' ? 'EdDSA' : o.alg;
const ttl = Number(o.ttl);
if (!ALGS.includes(alg))
	throw new Error(`--alg must be one of ${ALGS}, not ${o.alg}`);
if (!Number.isInteger(ttl) || ttl < 1)
	throw new Error(`--ttl must be a positive integer, not ${o.ttl}`);
for (const r of o.resource) {
	if (!URL.canParse(r) || r.includes('#'))
		throw new Error(`--resource must be an absolute URL, not ${r}`);
}
if (o.resource.length === 0)
	console.error('oauth-provider: no --resource: only the decoy is served');
const resources = new Set([...o.resource, DECOY]);

// --- keys --------------------------------------------------------------

const privateKeys = [];
const kids = {};
for (const a of ALGS) {
	const { privateKey } = await jose.generateKeyPair(a,
	    { extractable: true, ...(a === 'EdDSA' ? { crv: 'Ed25519' } : {}),
	    ...(a === 'RS256' ? { modulusLength: 2048 } : {}) });
	const jwk = await jose.exportJWK(privateKey);
	jwk.kid = await jose.calculateJwkThumbprint(jwk, 'sha256');
	jwk.alg = a;
	jwk.use = 'sig';
	privateKeys.push(jwk);
	kids[a] = jwk.kid;
}
const publicOf = ({ d, p, q, dp, dq, qi, ...pub }) => pub;
const publicKeys = privateKeys.map(publicOf);

function writeFile(file, data, mode) {
	// A fresh file, or one made anew: never through a link.
	fs.rmSync(file, { force: true });
	const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT |
	    fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
	try {
		fs.fchmodSync(fd, mode);
		fs.writeSync(fd, JSON.stringify(data, null, 1) + '\n');
	} finally {
		fs.closeSync(fd);
	}
}
if (o['jwks-out'])
	writeFile(o['jwks-out'], { keys: publicKeys }, 0o644);
if (o['keys-out'])
	writeFile(o['keys-out'], { keys: privateKeys }, 0o600);

// --- the provider ----------------------------------------------------------

const server = http.createServer();
await new Promise((resolve, reject) => {
	server.once('error', reject);
	server.listen(Number(o.port), '127.0.0.1', resolve);
});
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;

const configuration = {
	jwks: { keys: privateKeys },
	cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
	scopes: ['openid', 'offline_access', ...SCOPES],
	clients: [{
		client_id: o['client-id'],
		client_secret: o['client-secret'],
		client_name: 'mcpd test client (client credentials)',
		grant_types: ['client_credentials'],
		response_types: [],
		redirect_uris: [],
		token_endpoint_auth_method: 'client_secret_basic',
		scope: SCOPES.join(' '),
	}],
	// Any login is an account whose id is that login.
	async findAccount(ctx, id) {
		return { accountId: id, async claims() { return { sub: id }; } };
	},
	pkce: { required: () => true },
	features: {
		devInteractions: { enabled: true },
		clientCredentials: { enabled: true },
		introspection: { enabled: true },
		revocation: { enabled: true },
		registration: { enabled: true, initialAccessToken: false },
		resourceIndicators: {
			enabled: true,
			// No resource asked for: none (the token is opaque, for
			// userinfo alone).
			defaultResource: async () => undefined,
			useGrantedResource: async () => true,
			async getResourceServerInfo(ctx, resource) {
				if (!resources.has(resource))
					throw new errors.InvalidTarget();
				return {
					scope: SCOPES.join(' '),
					audience: resource,
					accessTokenTTL: ttl,
					accessTokenFormat: 'jwt',
					jwt: { sign: { alg } },
				};
			},
		},
	},
	// A refresh token for every client registered for that grant, with
	// or without offline_access.
	async issueRefreshToken(ctx, client) {
		return client.grantTypeAllowed('refresh_token');
	},
	ttl: {
		AccessToken: ttl,
		ClientCredentials: ttl,
		AuthorizationCode: 60,
		IdToken: 3600,
		RefreshToken: 24 * 3600,
		Interaction: 600,
		Session: 3600,
		Grant: 24 * 3600,
	},
};

const provider = new Provider(issuer, configuration);
provider.on('server_error', (ctx, err) => console.error('server_error:', err));
const handler = provider.callback();
server.on('request', (req, res) => {
	if (!o.quiet) {
		const t0 = Date.now();
		res.on('finish', () => console.error(
		    `oauth-provider: ${req.method} ${req.url} -> ` +
		    `${res.statusCode} (${Date.now() - t0} ms)`));
	}
	handler(req, res);
});

const meta = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
process.stdout.write(JSON.stringify({
	issuer,
	port,
	metadata: `${issuer}/.well-known/openid-configuration`,
	jwks_uri: meta.jwks_uri,
	authorization_endpoint: meta.authorization_endpoint,
	token_endpoint: meta.token_endpoint,
	registration_endpoint: meta.registration_endpoint,
	introspection_endpoint: meta.introspection_endpoint,
	resources: [...o.resource],
	decoy_resource: DECOY,
	scopes: SCOPES,
	alg,
	kid: kids[alg],
	kids,
	client_id: o['client-id'],
	client_secret: o['client-secret'],
	ttl,
	jwks_file: o['jwks-out'] ?? null,
	keys_file: o['keys-out'] ?? null,
}) + '\n');

for (const sig of ['SIGTERM', 'SIGINT']) {
	process.on(sig, () => {
		server.close();
		server.closeAllConnections();
		process.exit(0);
	});
}
