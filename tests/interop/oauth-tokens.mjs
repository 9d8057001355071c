// Hostile access tokens for an OAuth resource server's tests (mcpd's), each
// bad for one reason, as one JSON object on stdout, next to a good one.
// The legitimate-looking ones come from oauth-provider.mjs itself, through
// OAuth (client_credentials with its static client); the rest are forged
// with jose and node:crypto, from a good token of the provider and, where
// they are to carry the provider's own signature, its private keys (the
// file of its --keys-out).
//
//	node oauth-tokens.mjs --issuer ISSUER --resource URL --keys FILE
//	    [--decoy URL] [--client-id mcpd-test] [--client-secret mcpd-secret]
//
// Prints one line:
//	{"good": ..., "wrong_audience": ..., "expired": ..., "bad_signature": ...,
//	 "unknown_key": ..., "alg_none": ..., "missing_scope": ...,
//	 "other_scope": ..., "no_resource": ..., "wrong_issuer": ...,
//	 "wrong_typ": ..., "hs256_confusion": ...}
// each a compact JWS but no_resource:
//  good            from the provider: client_credentials, resource=URL,
//                  scope=mcp:tools.  What the server must take.
//  wrong_audience  from the provider, for another resource it serves,
//                  --decoy (https://decoy.invalid/mcp): aud is that.
//  missing_scope   from the provider, for URL but with no scope asked:
//                  no scope claim at all.  Wants 403 insufficient_scope
//                  (or 401).
//  other_scope     from the provider, for URL with scope=mcp:other alone.
//                  Wants 403 insufficient_scope (or 401).
//  no_resource     from the provider, scope=mcp:tools but no resource
//                  asked for (a client that forgot RFC 8707): an opaque
//                  token (43 characters, no dots), good at the provider's
//                  userinfo endpoint alone.
//  expired         good's header and claims but iat 10 minutes ago and
//                  exp 5 minutes ago (a new jti), signed with the
//                  provider's key (same kid and alg).
//  wrong_issuer    good's, with iss http://127.0.0.1:9 (a new jti),
//                  signed with the provider's key.
//  wrong_typ       good's, with typ "JWT" instead of "at+jwt" (RFC 9068
//                  section 4 wants it refused), signed with the provider's
//                  key.
//  bad_signature   good with one byte of its signature flipped (the
//                  decoded signature's, not a base64url character's, which
//                  could leave it the same).
//  unknown_key     good's claims signed with a fresh key of the same alg,
//                  kid "unknown-..." that the JWKS lacks.
//  alg_none        header {"alg":"none","typ":"at+jwt"}, good's claims,
//                  an empty signature: "HEADER.PAYLOAD.".
//  hs256_confusion header {"alg":"HS256","typ":"at+jwt","kid": the RSA
//                  key's kid}, good's claims, HMAC-SHA256 keyed with that
//                  RSA public key as PEM (SPKI, with its final newline):
//                  the old algorithm confusion attack.
// All but good must be refused with 401 invalid_token (missing_scope and
// other_scope: 403 insufficient_scope).  On stderr, what each is.
//
// Proved with oauth-selftest.mjs, which sends each to oauth-standin.mjs
// (jose's jwtVerify) and checks the answer:
//	node oauth-tokens.mjs --issuer http://127.0.0.1:PORT \
//	    --resource https://127.0.0.1:SPORT/mcp --keys /tmp/x/keys.json

import fs from 'node:fs';
import { createHmac, createPublicKey, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import * as jose from 'jose';

const { values: o } = parseArgs({
	options: {
		issuer: { type: 'string' },
		resource: { type: 'string' },
		keys: { type: 'string' },
		decoy: { type: 'string', default: 'https://decoy.invalid/mcp' },
		'client-id': { type: 'string', default: 'mcpd-test' },
		'client-secret': { type: 'string', default: 'mcpd-secret' },
	},
});
if (!o.issuer || !o.resource || !o.keys)
	throw new Error('--issuer, --resource and --keys are wanted');

const keys = JSON.parse(fs.readFileSync(o.keys, 'utf8')).keys;
const meta = await (await fetch(new URL('.well-known/openid-configuration',
    o.issuer.endsWith('/') ? o.issuer : o.issuer + '/'))).json();

async function fromProvider(resource, scope) {
	const body = new URLSearchParams({ grant_type: 'client_credentials' });
	if (resource)
		body.set('resource', resource);
	if (scope)
		body.set('scope', scope);
	const res = await fetch(meta.token_endpoint, {
		method: 'POST',
		headers: {
			authorization: 'Basic ' + Buffer.from(
			    `${encodeURIComponent(o['client-id'])}:` +
			    `${encodeURIComponent(o['client-secret'])}`).toString('base64'),
			'content-type': 'application/x-www-form-urlencoded',
		},
		body,
	});
	const j = await res.json();
	if (!res.ok || !j.access_token)
		throw new Error(`token endpoint: HTTP ${res.status}: ${JSON.stringify(j)}`);
	return j.access_token;
}

const b64 = x => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x))
    .toString('base64url');
const parts = t => {
	const [h, p, s] = t.split('.');
	return {
		header: JSON.parse(Buffer.from(h, 'base64url')),
		payload: JSON.parse(Buffer.from(p, 'base64url')),
		signature: s,
	};
};
const newJti = () => randomBytes(16).toString('base64url');

async function sign(header, payload, jwk) {
	const key = await jose.importJWK(jwk, header.alg);
	return new jose.CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
	    .setProtectedHeader(header).sign(key);
}

const out = {};
const about = {};

out.good = await fromProvider(o.resource, 'mcp:tools');
about.good = 'from the provider, for the resource, scope mcp:tools';
const good = parts(out.good);
const signer = keys.find(k => k.kid === good.header.kid);
if (!signer)
	throw new Error(`no key ${good.header.kid} in ${o.keys}`);

out.wrong_audience = await fromProvider(o.decoy, 'mcp:tools');
about.wrong_audience = `from the provider, aud ${parts(out.wrong_audience).payload.aud}`;
out.missing_scope = await fromProvider(o.resource);
about.missing_scope = 'from the provider, no scope claim: ' +
    `${'scope' in parts(out.missing_scope).payload ? 'HAS ONE' : 'none'}`;
out.other_scope = await fromProvider(o.resource, 'mcp:other');
about.other_scope = `from the provider, scope ${parts(out.other_scope).payload.scope}`;
out.no_resource = await fromProvider(undefined, 'mcp:tools');
about.no_resource = `from the provider, no resource asked for: ${
    out.no_resource.split('.').length === 3 ? 'A JWT' : 'an opaque token'}`;

const now = Math.floor(Date.now() / 1000);
out.expired = await sign(good.header,
    { ...good.payload, jti: newJti(), iat: now - 600, exp: now - 300 }, signer);
about.expired = `the provider's key ${signer.kid}, exp ${now - 300} (5 minutes ago)`;
out.short_lived = await sign(good.header,
    { ...good.payload, jti: newJti(), iat: now, exp: now + 4 }, signer);
about.short_lived = `the provider's key, exp ${now + 4} (in 4 s)`;
out.wrong_issuer = await sign(good.header,
    { ...good.payload, jti: newJti(), iss: 'http://127.0.0.1:9' }, signer);
about.wrong_issuer = "the provider's key, iss http://127.0.0.1:9";
out.wrong_typ = await sign({ ...good.header, typ: 'JWT' },
    { ...good.payload, jti: newJti() }, signer);
about.wrong_typ = "the provider's key, typ JWT";

{
	const sig = Buffer.from(good.signature, 'base64url');
	sig[Math.floor(sig.length / 3)] ^= 0x01;
	const [h, p] = out.good.split('.');
	out.bad_signature = `${h}.${p}.${sig.toString('base64url')}`;
	about.bad_signature = `good with signature byte ${Math.floor(sig.length / 3)} flipped`;
}

{
	const alg = good.header.alg;
	const { privateKey } = await jose.generateKeyPair(alg,
	    { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
	const jwk = await jose.exportJWK(privateKey);
	const kid = `unknown-${randomBytes(6).toString('hex')}`;
	out.unknown_key = await sign({ ...good.header, kid },
	    { ...good.payload, jti: newJti() }, jwk);
	about.unknown_key = `a fresh ${alg} key, kid ${kid}`;
}

out.alg_none = `${b64({ alg: 'none', typ: 'at+jwt' })}.` +
    `${b64({ ...good.payload, jti: newJti() })}.`;
about.alg_none = 'alg none, empty signature';

{
	const rsa = keys.find(k => k.kty === 'RSA');
	const pem = createPublicKey({ key: { kty: rsa.kty, n: rsa.n, e: rsa.e },
	    format: 'jwk' }).export({ type: 'spki', format: 'pem' });
	const h = b64({ alg: 'HS256', typ: 'at+jwt', kid: rsa.kid });
	const p = b64({ ...good.payload, jti: newJti() });
	const mac = createHmac('sha256', pem).update(`${h}.${p}`).digest('base64url');
	out.hs256_confusion = `${h}.${p}.${mac}`;
	about.hs256_confusion = `HS256 keyed with the RSA key ${rsa.kid} as PEM`;
}

for (const [k, v] of Object.entries(about))
	console.error(`oauth-tokens: ${k}: ${v}`);
process.stdout.write(JSON.stringify(out) + '\n');
