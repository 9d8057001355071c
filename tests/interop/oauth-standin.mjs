// A stand-in for mcpd's OAuth resource server, made of the official MCP
// TypeScript SDK's server pieces (McpServer, StreamableHTTPServerTransport)
// and jose, over HTTPS: what oauth.mjs was proved against before mcpd had
// OAuth, and what to compare mcpd's behaviour with.  It does what an MCP
// server that is an OAuth 2.1 resource server must (MCP authorization,
// 2025-06-18 and later; RFC 9728, RFC 6750, RFC 9068):
//  - POST, GET and DELETE /mcp want "Authorization: Bearer TOKEN".  With
//    none: 401 and
//	WWW-Authenticate: Bearer resource_metadata="https://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"
//    with a token that is not good: 401, error="invalid_token" and an
//    error_description saying why, before the same two parameters; with a
//    good token lacking the scope mcp:tools: 403, error="insufficient_scope".
//  - The protected resource metadata, at both
//    /.well-known/oauth-protected-resource/mcp (RFC 9728's place for the
//    resource https://127.0.0.1:PORT/mcp) and
//    /.well-known/oauth-protected-resource (where older clients look):
//	{"resource": "https://127.0.0.1:PORT/mcp",
//	 "authorization_servers": [ISSUER], "scopes_supported": ["mcp:tools"],
//	 "bearer_methods_supported": ["header"]}
//  - A token is good when it is a JWS (compact) of the issuer's keys (its
//    JWKS, from jwks_uri of ISSUER/.well-known/openid-configuration),
//    alg ES256, RS256 or EdDSA (never none nor HS*), typ at+jwt, iss the
//    issuer, aud the resource (a string or an array holding it), exp in
//    the future (no leeway), with sub, client_id, iat and jti.
//  - The MCP server has two toy tools: add {a, b} answers a+b as text;
//    whoami answers the token's sub, client_id and scope as text.
//
//	node oauth-standin.mjs --issuer ISSUER --cert PEM --key PEM
//	    [--port N] [--resource URL]
//
// The resource is https://127.0.0.1:PORT/mcp unless --resource says
// otherwise; --port 0 (the default) is an ephemeral port.  When it listens
// it prints one JSON line on stdout:
//	{"url": "https://127.0.0.1:PORT/mcp", "port": PORT, "resource": ...,
//	 "resource_metadata": ".../.well-known/oauth-protected-resource/mcp",
//	 "issuer": ISSUER, "jwks_uri": ...}
// and on stderr a line a request: its method, path, MCP-Protocol-Version,
// whether it had a bearer token, and the status of the answer (and why a
// token was refused).  SIGTERM or SIGINT end it.
//
// Proved with oauth-selftest.mjs (which runs it with oauth-provider.mjs,
// oauth.mjs and oauth-tokens.mjs).

import fs from 'node:fs';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import * as jose from 'jose';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const { values: o } = parseArgs({
	options: {
		issuer: { type: 'string' },
		cert: { type: 'string' },
		key: { type: 'string' },
		port: { type: 'string', default: '0' },
		resource: { type: 'string' },
	},
});
if (!o.issuer || !o.cert || !o.key)
	throw new Error('--issuer, --cert and --key are wanted');

const SCOPE = 'mcp:tools';
const meta = await (await fetch(new URL('.well-known/openid-configuration',
    o.issuer.endsWith('/') ? o.issuer : o.issuer + '/'))).json();
if (meta.issuer !== o.issuer)
	throw new Error(`the issuer's metadata names ${meta.issuer}, not ${o.issuer}`);
const jwks = jose.createRemoteJWKSet(new URL(meta.jwks_uri));

const server = https.createServer({
	cert: fs.readFileSync(o.cert),
	key: fs.readFileSync(o.key),
});
await new Promise((resolve, reject) => {
	server.once('error', reject);
	server.listen(Number(o.port), '127.0.0.1', resolve);
});
const port = server.address().port;
const origin = `https://127.0.0.1:${port}`;
const resource = o.resource ?? `${origin}/mcp`;
const rpath = new URL(resource).pathname.replace(/\/$/, '');
const prmUrl = `${origin}/.well-known/oauth-protected-resource${rpath === '/' ? '' : rpath}`;
const prm = {
	resource,
	authorization_servers: [o.issuer],
	scopes_supported: [SCOPE],
	bearer_methods_supported: ['header'],
};

class Refusal extends Error {
	constructor(status, error, description) {
		super(description);
		this.status = status;
		this.error = error;
	}
}

// The claims of a good token; a Refusal otherwise.
async function verify(token) {
	let payload;
	try {
		({ payload } = await jose.jwtVerify(token, jwks, {
			issuer: o.issuer,
			audience: resource,
			typ: 'at+jwt',
			algorithms: ['ES256', 'RS256', 'EdDSA', 'Ed25519'],
			requiredClaims: ['exp', 'iat', 'sub', 'client_id', 'jti'],
			clockTolerance: 0,
		}));
	} catch (e) {
		throw new Refusal(401, 'invalid_token', `${e.code ?? 'error'}: ${e.message}`);
	}
	const scopes = typeof payload.scope === 'string' ?
	    payload.scope.split(' ') : [];
	if (!scopes.includes(SCOPE))
		throw new Refusal(403, 'insufficient_scope',
		    `the token's scope (${payload.scope ?? 'none'}) lacks ${SCOPE}`);
	return { payload, scopes };
}

function challenge(res, status, error, description) {
	const q = s => String(s).replace(/["\\]/g, '');
	const parts = [];
	if (error)
		parts.push(`error="${error}"`, `error_description="${q(description)}"`);
	parts.push(`resource_metadata="${prmUrl}"`, `scope="${SCOPE}"`);
	res.writeHead(status, {
		'WWW-Authenticate': `Bearer ${parts.join(', ')}`,
		'Content-Type': 'application/json',
	});
	res.end(JSON.stringify(error ? { error, error_description: description } :
	    { error: 'unauthorized', error_description: 'a bearer token is wanted' }));
}

function mcpServer() {
	const s = new McpServer({ name: 'mcpd-oauth-standin', version: '1.0.0' });
	s.registerTool('add', {
		description: 'Adds two numbers',
		inputSchema: { a: z.number(), b: z.number() },
	}, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
	s.registerTool('whoami', {
		description: "The token's subject, client and scope",
	}, async (extra) => {
		const p = extra.authInfo?.extra?.payload ?? {};
		return { content: [{ type: 'text', text:
		    `sub=${p.sub} client_id=${p.client_id} scope=${p.scope}` }] };
	});
	return s;
}

const sessions = new Map();	// session id -> its transport

async function readBody(req) {
	const chunks = [];
	for await (const c of req)
		chunks.push(c);
	const s = Buffer.concat(chunks).toString('utf8');
	return s ? JSON.parse(s) : undefined;
}

async function serveMcp(req, res, auth) {
	req.auth = {
		token: auth.token,
		clientId: auth.payload.client_id,
		scopes: auth.scopes,
		expiresAt: auth.payload.exp,
		resource: new URL(resource),
		extra: { payload: auth.payload },
	};
	const sid = req.headers['mcp-session-id'];
	const body = req.method === 'POST' ? await readBody(req) : undefined;
	let transport = sid ? sessions.get(sid) : undefined;
	if (sid && !transport) {
		res.writeHead(404, { 'Content-Type': 'application/json' });
		res.end(JSON.stringify({ jsonrpc: '2.0', id: null,
		    error: { code: -32001, message: 'Session not found' } }));
		return;
	}
	if (!transport) {
		if (req.method !== 'POST' || !isInitializeRequest(body)) {
			res.writeHead(400, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error:
			    { code: -32000, message: 'No session: initialize first' } }));
			return;
		}
		transport = new StreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID(),
			onsessioninitialized: id => sessions.set(id, transport),
		});
		transport.onclose = () => {
			if (transport.sessionId)
				sessions.delete(transport.sessionId);
		};
		await mcpServer().connect(transport);
	}
	await transport.handleRequest(req, res, body);
}

server.on('request', async (req, res) => {
	const url = new URL(req.url, origin);
	const authz = req.headers.authorization;
	let why = '';
	res.on('close', () => console.error(`standin: ${req.method} ${url.pathname}` +
	    ` mcp-protocol-version=${req.headers['mcp-protocol-version'] ?? '-'}` +
	    ` bearer=${authz ? 'yes' : 'no'} -> ${res.statusCode}${why}`));
	try {
		if (url.pathname === '/.well-known/oauth-protected-resource' ||
		    url.pathname === prmUrl.slice(origin.length)) {
			if (req.method !== 'GET') {
				res.writeHead(405, { Allow: 'GET' });
				res.end();
				return;
			}
			res.writeHead(200, { 'Content-Type': 'application/json',
			    'Cache-Control': 'max-age=60' });
			res.end(JSON.stringify(prm));
			return;
		}
		if (url.pathname !== new URL(resource).pathname) {
			res.writeHead(404, { 'Content-Type': 'text/plain' });
			res.end('not found\n');
			return;
		}
		const m = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i.exec(authz ?? '');
		if (!authz) {
			challenge(res, 401);
			return;
		}
		if (!m) {
			why = ' (not a bearer token)';
			challenge(res, 401, 'invalid_request', 'not a bearer token');
			return;
		}
		let auth;
		try {
			auth = { token: m[1], ...await verify(m[1]) };
		} catch (e) {
			if (!(e instanceof Refusal))
				throw e;
			why = ` (${e.error}: ${e.message})`;
			challenge(res, e.status, e.error, e.message);
			return;
		}
		await serveMcp(req, res, auth);
	} catch (e) {
		console.error('standin:', e);
		if (!res.headersSent) {
			res.writeHead(500, { 'Content-Type': 'text/plain' });
			res.end('internal error\n');
		}
	}
});

process.stdout.write(JSON.stringify({
	url: `${origin}/mcp`,
	port,
	resource,
	resource_metadata: prmUrl,
	issuer: o.issuer,
	jwks_uri: meta.jwks_uri,
}) + '\n');

for (const sig of ['SIGTERM', 'SIGINT']) {
	process.on(sig, () => {
		server.close();
		server.closeAllConnections();
		process.exit(0);
	});
}
