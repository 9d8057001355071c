// Tokens for tests/integration/oauth.sh, signed with jose as an OAuth
// issuer signs RFC 9068 access tokens, good and hostile, and the issuer's
// key sets.  node jwt-tokens.mjs DIR ISSUER AUDIENCE writes DIR/jwks.json
// (ES256 es-1, EdDSA ed-1) and DIR/jwks2.json (es-1, RS256 rs-1), and
// prints the tokens as one JSON object, by name.
import * as jose from 'jose';
import fs from 'node:fs';
import crypto from 'node:crypto';
const [dir, iss, aud] = process.argv.slice(2);
const now = Math.floor(Date.now() / 1000);
const gen = async (alg, opts) => (await jose.generateKeyPair(alg, { extractable: true, ...opts }));
const es = await gen('ES256'), ed = await gen('EdDSA', { crv: 'Ed25519' });
const rs = await gen('RS256'), stray = await gen('ES256');
const pub = async (k, kid, alg) => ({ ...(await jose.exportJWK(k.publicKey)), kid, alg, use: 'sig' });
fs.writeFileSync(`${dir}/jwks.json`, JSON.stringify({ keys: [await pub(es, 'es-1', 'ES256'), await pub(ed, 'ed-1', 'EdDSA')] }));
fs.writeFileSync(`${dir}/jwks2.json`, JSON.stringify({ keys: [await pub(es, 'es-1', 'ES256'), await pub(rs, 'rs-1', 'RS256')] }));
const sign = (key, kid, alg, claims = {}, hdr = {}) => new jose.SignJWT({ scope: 'openid mcp:tools', client_id: 'c1', ...claims })
	.setProtectedHeader({ alg, typ: 'at+jwt', kid, ...hdr })
	.setIssuer(claims.iss ?? iss).setAudience(claims.aud ?? aud).setSubject(claims.sub ?? 'alice')
	.setIssuedAt(claims.iat ?? now).setExpirationTime(claims.exp ?? now + 600).setJti(crypto.randomUUID())
	.sign(key.privateKey);
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
const good = await sign(es, 'es-1', 'ES256');
const [h, p, s] = good.split('.');
const flip = (x) => x.slice(0, 10) + (x[10] === 'A' ? 'B' : 'A') + x.slice(11);
const nPub = (await jose.exportJWK(rs.publicKey)).n;
const hs = async (secret) => {
	const head = b64({ alg: 'HS256', typ: 'at+jwt', kid: 'rs-1' });
	const body = p;
	const mac = crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
	return `${head}.${body}.${mac}`;
};
const out = {
	good,
	eddsa: await sign(ed, 'ed-1', 'EdDSA'),
	rs256: await sign(rs, 'rs-1', 'RS256'),
	bob: await sign(es, 'es-1', 'ES256', { sub: 'bob', groups: ['ops', 'eng'] }),
	nobody: await sign(es, 'es-1', 'ES256', { sub: 'carol' }),
	no_sub: await new jose.SignJWT({ scope: 'mcp:tools' }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'es-1' })
		.setIssuer(iss).setAudience(aud).setExpirationTime(now + 600).sign(es.privateKey),
	wrong_audience: await sign(es, 'es-1', 'ES256', { aud: 'https://other.example/mcp' }),
	audience_list: await sign(es, 'es-1', 'ES256', { aud: ['https://other.example/mcp', aud] }),
	wrong_issuer: await sign(es, 'es-1', 'ES256', { iss: 'https://evil.example' }),
	expired: await sign(es, 'es-1', 'ES256', { iat: now - 7200, exp: now - 3600 }),
	just_expired: await sign(es, 'es-1', 'ES256', { iat: now - 600, exp: now - 20 }),
	not_yet: await sign(es, 'es-1', 'ES256', { nbf: now + 3600 }),
	id_token_type: await sign(es, 'es-1', 'ES256', {}, { typ: 'JWT' }),
	missing_scope: await sign(es, 'es-1', 'ES256', { scope: 'openid profile' }),
	scp_list: await sign(es, 'es-1', 'ES256', { scope: undefined, scp: ['mcp:tools'] }),
	bad_signature: `${h}.${p}.${flip(s)}`,
	changed_claims: `${h}.${b64({ ...JSON.parse(Buffer.from(p, 'base64url')), sub: 'bob' })}.${s}`,
	unknown_key: await sign(stray, 'stray-1', 'ES256'),
	no_kid_stray: await sign(stray, undefined, 'ES256'),
	alg_none: `${b64({ alg: 'none', typ: 'at+jwt' })}.${p}.`,
	hs256_public_key: await hs(Buffer.from(nPub, 'base64url')),
	embedded_jwk: await sign(stray, undefined, 'ES256', {}, { jwk: await jose.exportJWK(stray.publicKey) }),
};
console.log(JSON.stringify(out));
