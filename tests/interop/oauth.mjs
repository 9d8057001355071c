// An MCP server behind OAuth 2.1 (mcpd's resource server, or the stand-in
// oauth-standin.mjs), driven end to end by the official MCP TypeScript
// SDK's own OAuth client (client/auth.js, through StreamableHTTPClientTransport),
// headless, with oauth-provider.mjs (oidc-provider) as the authorization
// server the server names.
//
//	node oauth.mjs --url https://127.0.0.1:PORT/mcp [--ca CAFILE]
//	    --tool NAME --args JSON --expect TEXT [--tag NAME]
//	    [--login alice] [--auth-method none|client_secret_basic|client_secret_post]
//	node oauth.mjs --client-credentials --url URL [--ca CAFILE]
//	    --tool NAME --args JSON --expect TEXT [--tag NAME]
//	    [--client-id mcpd-test] [--client-secret mcpd-secret]
//	    [--scope mcp:tools] [--issuer ISSUER]
// and in either mode [--refresh]: see below.
//
// --ca: the CA of the MCP server's certificate.  Node's fetch (undici)
// trusts the CAs of NODE_EXTRA_CA_CERTS, which Node reads once, when it
// starts; so when NODE_EXTRA_CA_CERTS is not CAFILE already this script
// runs itself again with NODE_EXTRA_CA_CERTS=CAFILE (the shell test may
// as well set it and spare that).  The authorization server is plain HTTP
// on 127.0.0.1.
//
// The authorization code flow (the default), as the SDK documents it
// (examples/client/simpleOAuthClient.js): connect; the server answers 401;
// the SDK finds the protected resource metadata from the WWW-Authenticate
// header's resource_metadata, the authorization server's metadata from
// it, registers a client dynamically (RFC 7591), makes a PKCE pair and
// calls the provider's redirectToAuthorization(url) and the connect
// fails with UnauthorizedError; the "browser" here (fetch, redirects
// followed by hand, cookies kept) logs in to oidc-provider's development
// login page as --login (alice) and consents, and is sent to the redirect
// URI, http://127.0.0.1:PORT/callback on a listener of this script, with
// the code; transport.finishAuth(code) trades it for tokens; a new
// transport connects with them, lists the tools and calls --tool.
// --auth-method is the client's token_endpoint_auth_method (none: a
// public client, the default; oidc-provider supports all three).
//
// --client-credentials: the SDK's ClientCredentialsProvider
// (client/auth-extensions.js: client_credentials, client_secret_basic)
// with the static client of oauth-provider.mjs; it connects at once.  The
// SDK asks for the scope the provider is given, --scope, not the one of
// the 401 or of the metadata.  --issuer: the authorization server the
// credentials are for (the SDK wants it, expectedIssuer); by default the
// first of the server's protected resource metadata.
//
// Every request the SDK makes goes through a recording fetch: the "#"
// lines show them in order, with the headers that matter.  Then "ok"/"not
// ok" lines for: the first request got 401 with a resource_metadata; the
// SDK fetched the metadata there first; it found the authorization
// server's metadata; (code flow) it registered a client; the authorization
// request had PKCE S256, response_type=code, state, and resource = the MCP
// URL; the browser got a code back with state and iss; the token request
// had the code_verifier of the challenge and resource = the MCP URL; a
// token came, a JWT of the issuer for the MCP URL with mcp:tools; the
// second connect used it with no 401; tools/list lists --tool; the tool's
// answer has --expect.  With --refresh (for a provider with a short
// --ttl), then: it waits for the access token to expire and calls the tool
// again: the server must answer 401 invalid_token, the SDK get a new token
// by itself (the refresh token grant, or client credentials again) for the
// MCP URL, and the call go through on the same session.  And "done"
// (lib.mjs).
//
// What the SDK (1.32.2) sends, as recorded against the stand-in:
//  1. POST URL, the initialize, no Authorization (nor MCP-Protocol-Version:
//     the SDK sends none with the initialize) -> 401.
//  2. GET the resource_metadata URL of the 401's WWW-Authenticate, as it
//     is (MCP-Protocol-Version: 2025-11-25): no guessing at well-known
//     paths when the header names one (without one, the SDK tries
//     /.well-known/oauth-protected-resource/mcp, then
//     /.well-known/oauth-protected-resource).  It takes the first of
//     authorization_servers, and checks that "resource" is the URL (or a
//     prefix of it) and sends it verbatim as resource.
//  3. GET ISSUER/.well-known/oauth-authorization-server (RFC 8414;
//     MCP-Protocol-Version, Accept: application/json); only on a 4xx
//     would it go on to ISSUER/.well-known/openid-configuration.
//     oidc-provider answers the first.
//  4. (code) POST registration_endpoint, JSON: client_name,
//     redirect_uris, grant_types, response_types,
//     token_endpoint_auth_method, and scope = the 401's scope parameter
//     (else the metadata's scopes_supported, else the client's own).
//  5. (code) the authorization URL: response_type=code, client_id,
//     code_challenge, code_challenge_method=S256, redirect_uri, state (as
//     the provider's state() makes it), scope (the same), resource.
//  6. POST token_endpoint, form: grant_type=authorization_code, code,
//     code_verifier, redirect_uri, resource, and client_id (none) or
//     Authorization: Basic (client_secret_basic); or grant_type=
//     client_credentials, scope (the ClientCredentialsProvider's),
//     resource, Authorization: Basic.
//  7. POST URL again, Authorization: Bearer; then the session's requests
//     with Mcp-Session-Id and MCP-Protocol-Version, and a GET for the
//     server's SSE stream.  A later 401 (an expired token) makes it
//     refresh (or get client credentials again) and resend, once.
//
// Proved with (Node 22 of tests/node_modules), oauth-provider.mjs and
// oauth-standin.mjs running (oauth-selftest.mjs starts them all and runs
// this in every mode):
//	node oauth.mjs --url https://127.0.0.1:PORT/mcp --ca ca.pem \
//	    --tool add --args '{"a":6,"b":36}' --expect 42
//	node oauth.mjs --url https://127.0.0.1:PORT/mcp --ca ca.pem \
//	    --tool whoami --expect sub=carol --login carol
//	node oauth.mjs --client-credentials --url https://127.0.0.1:PORT/mcp \
//	    --ca ca.pem --tool add --args '{"a":6,"b":36}' --expect 42

import http from 'node:http';
import os from 'node:os';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
	attempt, brief, check, diag, finish, notOk, ok, sleep, textOf,
} from './lib.mjs';

const { values: o } = parseArgs({
	options: {
		url: { type: 'string' },
		ca: { type: 'string' },
		tool: { type: 'string' },
		args: { type: 'string', default: '{}' },
		expect: { type: 'string' },
		tag: { type: 'string' },
		login: { type: 'string', default: 'alice' },
		'auth-method': { type: 'string', default: 'none' },
		'client-credentials': { type: 'boolean', default: false },
		'client-id': { type: 'string', default: 'mcpd-test' },
		'client-secret': { type: 'string', default: 'mcpd-secret' },
		scope: { type: 'string', default: 'mcp:tools' },
		issuer: { type: 'string' },
		refresh: { type: 'boolean', default: false },
	},
});

if (o.ca && process.env.NODE_EXTRA_CA_CERTS !== o.ca) {
	// Itself again, with the signals that end this (timeout's) passed on.
	const c = spawn(process.execPath, process.argv.slice(1), {
		stdio: 'inherit',
		env: { ...process.env, NODE_EXTRA_CA_CERTS: o.ca },
	});
	for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'])
		process.on(sig, () => c.kill(sig));
	const [code, sig] = await new Promise(r => c.on('exit', (...a) => r(a)));
	process.exit(code ?? (sig ? 128 + os.constants.signals[sig] : 1));
}

const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError, discoverOAuthProtectedResourceMetadata } =
    await import('@modelcontextprotocol/sdk/client/auth.js');
const { ClientCredentialsProvider } = await import(
    '@modelcontextprotocol/sdk/client/auth-extensions.js');

const CC = o['client-credentials'];
const T = `(${o.tag ?? (CC ? 'client credentials' : 'authorization code')})`;
if (!o.url || !o.tool || o.expect === undefined) {
	notOk(`${T} options`, '--url, --tool and --expect are wanted');
	finish();
	process.exit(2);
}
const mcpUrl = new URL(o.url);
const toolArgs = JSON.parse(o.args);

// --- a fetch that records what the SDK sends and gets -----------------

const log = [];	// { method, url, headers, body, status, rheaders }
const SHOWN = ['authorization', 'mcp-protocol-version', 'content-type',
    'accept', 'mcp-session-id'];
function headersOf(h) {
	const out = {};
	for (const [k, v] of new Headers(h ?? {}))
		out[k.toLowerCase()] = v;
	return out;
}
function bodyOf(b) {
	if (b === undefined || b === null)
		return undefined;
	return typeof b === 'string' ? b : b instanceof URLSearchParams ?
	    b.toString() : `(${typeof b})`;
}
async function recordingFetch(url, init = {}) {
	const e = {
		method: (init.method ?? 'GET').toUpperCase(),
		url: String(url),
		headers: headersOf(init.headers),
		body: bodyOf(init.body),
	};
	log.push(e);
	const res = await fetch(url, init);
	e.status = res.status;
	e.rheaders = headersOf(res.headers);
	const shown = SHOWN.filter(k => k in e.headers).map(k => `${k}: ${
	    k === 'authorization' ? e.headers[k].replace(/^(\S+ ).*/, '$1...') :
	    e.headers[k]}`);
	diag(`SDK: ${e.method} ${e.url}${shown.length ? ` [${shown.join('; ')}]` : ''}` +
	    ` -> ${res.status}` + (e.rheaders['www-authenticate'] ?
	    ` WWW-Authenticate: ${e.rheaders['www-authenticate']}` : ''));
	return res;
}

// An error with its causes (fetch's TypeError says why in its cause).
function why(e) {
	let s = `${e?.stack ?? e}`;
	for (let c = e?.cause; c; c = c.cause)
		s += `\ncaused by: ${c?.stack ?? c}`;
	return s;
}

function jwtParts(t) {
	try {
		const [h, p] = t.split('.').slice(0, 2).map(s =>
		    JSON.parse(Buffer.from(s, 'base64url').toString()));
		return { header: h, payload: p };
	} catch {
		return undefined;
	}
}

// --- the OAuth client provider: in memory, and a headless browser -------

class Browser {
	constructor() {
		this.jar = new Map();
		this.steps = [];
	}
	cookies() {
		return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
	}
	async fetch(url, init = {}) {
		const headers = { ...init.headers };
		if (this.jar.size)
			headers.cookie = this.cookies();
		const res = await fetch(url, { ...init, headers, redirect: 'manual' });
		for (const c of res.headers.getSetCookie()) {
			const [nv, ...attrs] = c.split(';');
			const i = nv.indexOf('=');
			const name = nv.slice(0, i).trim(), value = nv.slice(i + 1).trim();
			const expired = attrs.some(a => /^\s*max-age=0\s*$/i.test(a) ||
			    /^\s*expires=.*1970/i.test(a));
			if (expired || value === '')
				this.jar.delete(name);
			else
				this.jar.set(name, value);
		}
		this.steps.push(`${init.method ?? 'GET'} ${new URL(url).pathname} -> ${res.status}`);
		return res;
	}
}

function unescapeHtml(s) {
	return s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos|#39);/gi, (m, e) => {
		e = e.toLowerCase();
		if (e.startsWith('#x'))
			return String.fromCodePoint(parseInt(e.slice(2), 16));
		if (e.startsWith('#'))
			return String.fromCodePoint(parseInt(e.slice(1), 10));
		return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e];
	});
}

// The first POST form of a page: its action and fields, filled in.
function fillForm(html, pageUrl, login) {
	const f = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
	if (!f)
		return undefined;
	const attr = (s, n) => {
		const m = new RegExp(`\\b${n}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(s);
		return m ? unescapeHtml(m[2] ?? m[3] ?? m[4]) : undefined;
	};
	if ((attr(f[1], 'method') ?? 'get').toLowerCase() !== 'post')
		return undefined;
	const fields = new URLSearchParams();
	for (const m of f[2].matchAll(/<input\b([^>]*)>/gi)) {
		const name = attr(m[1], 'name');
		if (!name)
			continue;
		const type = (attr(m[1], 'type') ?? 'text').toLowerCase();
		if (name === 'login')
			fields.set(name, login);
		else if (type === 'password')
			fields.set(name, 'any password');
		else
			fields.set(name, attr(m[1], 'value') ?? '');
	}
	return { action: new URL(attr(f[1], 'action') ?? pageUrl, pageUrl),
	    fields };
}

class Callback {
	constructor() {
		this.server = http.createServer((req, res) => {
			const u = new URL(req.url, this.base);
			if (u.pathname !== '/callback') {
				res.writeHead(404).end();
				return;
			}
			res.writeHead(200, { 'Content-Type': 'text/plain' });
			res.end('Authorized: you may close this window.\n');
			this.resolve(u.searchParams);
		});
		this.got = new Promise((resolve) => { this.resolve = resolve; });
	}
	async listen() {
		await new Promise(r => this.server.listen(0, '127.0.0.1', r));
		this.base = `http://127.0.0.1:${this.server.address().port}`;
		return `${this.base}/callback`;
	}
	close() {
		this.server.close();
		this.server.closeAllConnections();
	}
}

class HeadlessProvider {
	constructor(redirectUrl) {
		this._redirectUrl = redirectUrl;
		this.calls = [];
		this.stateValue = Buffer.from(crypto.getRandomValues(new Uint8Array(16)))
		    .toString('base64url');
	}
	get redirectUrl() { return this._redirectUrl; }
	get clientMetadata() {
		return {
			client_name: 'mcpd interop (oauth.mjs)',
			redirect_uris: [this._redirectUrl],
			grant_types: ['authorization_code', 'refresh_token'],
			response_types: ['code'],
			token_endpoint_auth_method: o['auth-method'],
		};
	}
	state() { return this.stateValue; }
	clientInformation() {
		this.calls.push('clientInformation');
		return this._client;
	}
	saveClientInformation(info) {
		this.calls.push('saveClientInformation');
		this._client = info;
	}
	tokens() { return this._tokens; }
	saveTokens(t) {
		this.calls.push('saveTokens');
		this._tokens = t;
	}
	saveCodeVerifier(v) {
		this.calls.push('saveCodeVerifier');
		this._verifier = v;
	}
	codeVerifier() {
		this.calls.push('codeVerifier');
		return this._verifier;
	}
	saveDiscoveryState(s) {
		this.calls.push('saveDiscoveryState');
		this._discovery = s;
	}
	discoveryState() { return this._discovery; }
	invalidateCredentials(what) {
		this.calls.push(`invalidateCredentials(${what})`);
		if (what === 'all' || what === 'client')
			this._client = undefined;
		if (what === 'all' || what === 'tokens')
			this._tokens = undefined;
		if (what === 'all' || what === 'verifier')
			this._verifier = undefined;
	}
	// The user agent: from the authorization URL through the login and
	// consent pages to the redirect URI.  Not awaited by the SDK, as a
	// browser would not be.
	redirectToAuthorization(url) {
		this.calls.push('redirectToAuthorization');
		this.authorizationUrl = new URL(url);
		this.browser = new Browser();
		this.browsing = this.browse(this.authorizationUrl);
		this.browsing.catch(() => {});
	}
	async browse(start) {
		const b = this.browser;
		let url = start, init = {};
		for (let i = 0; i < 20; i++) {
			if (url.href.startsWith(this._redirectUrl)) {
				const res = await b.fetch(url);
				await res.body?.cancel();
				return;
			}
			const res = await b.fetch(url, init);
			init = {};
			if ([301, 302, 303, 307, 308].includes(res.status)) {
				await res.body?.cancel();
				url = new URL(res.headers.get('location'), url);
				continue;
			}
			const html = await res.text();
			if (res.status !== 200)
				throw new Error(`${url.pathname}: HTTP ${res.status}: ${html.slice(0, 300)}`);
			const form = fillForm(html, url, o.login);
			if (!form)
				throw new Error(`${url.pathname}: no form on the page: ${html.slice(0, 300)}`);
			this.forms = [...(this.forms ?? []), Object.fromEntries(form.fields)];
			url = form.action;
			init = { method: 'POST', body: form.fields.toString(),
			    headers: { 'content-type': 'application/x-www-form-urlencoded' } };
		}
		throw new Error('more than 20 steps in the authorization server');
	}
}

// --- the flow ---------------------------------------------------------------

const isMcp = e => e.url === mcpUrl.href || e.url.split('?')[0] === mcpUrl.href;
let provider, callback, tokenRequest, registration;

function newTransport() {
	return new StreamableHTTPClientTransport(mcpUrl,
	    { authProvider: provider, fetch: recordingFetch });
}
function newClient() {
	return new Client({ name: 'mcpd-interop-oauth', version: '1.0.0' },
	    { capabilities: {} });
}

let client;
if (CC) {
	let issuer = o.issuer;
	if (!issuer) {
		// The SDK's own discovery (it sends the same request again).
		const prm = await discoverOAuthProtectedResourceMetadata(mcpUrl);
		issuer = prm.authorization_servers?.[0];
		diag(`the credentials are for ${issuer}, the first authorization server of ${mcpUrl}'s metadata`);
	}
	log.length = 0;
	provider = new ClientCredentialsProvider({
		clientId: o['client-id'],
		clientSecret: o['client-secret'],
		scope: o.scope,
		expectedIssuer: issuer,
	});
	client = newClient();
	try {
		await client.connect(newTransport());
		ok(`${T} the SDK's ClientCredentialsProvider connects to ${mcpUrl}`);
	} catch (e) {
		notOk(`${T} the SDK's ClientCredentialsProvider connects to ${mcpUrl}`,
		    why(e));
		client = undefined;
	}
} else {
	callback = new Callback();
	provider = new HeadlessProvider(await callback.listen());
	let transport = newTransport();
	client = newClient();
	let first;
	try {
		await client.connect(transport);
		first = 'connected';
	} catch (e) {
		first = e;
	}
	if (!check(`${T} the first connect fails with the SDK's UnauthorizedError ` +
	    `and the provider was sent to authorize`,
	    first instanceof UnauthorizedError && provider.authorizationUrl,
	    `connect: ${why(first)}`)) {
		client = undefined;
	}
	if (client) {
		let params;
		try {
			await provider.browsing;
			params = await Promise.race([callback.got,
			    new Promise((_, rej) => setTimeout(() =>
			    rej(new Error('no callback in 30 s')), 30000))]);
		} catch (e) {
			notOk(`${T} the headless browser logs in as ${o.login}, consents, ` +
			    `and gets to the redirect URI with a code`, `${e.stack ?? e}`,
			    `steps: ${provider.browser?.steps.join(', ')}`);
			client = undefined;
		}
		if (params) {
			const code = params.get('code');
			check(`${T} the headless browser logs in as ${o.login}, consents, ` +
			    `and gets to the redirect URI with a code ` +
			    `(${provider.browser.steps.length} requests: ${provider.browser.steps.join(', ')})`,
			    code && !params.get('error'), `callback: ${params}`);
			diag(`forms submitted: ${brief(provider.forms)}`);
			check(`${T} the redirect has the state sent and iss = the issuer ` +
			    `(RFC 9207: ${params.get('iss')})`,
			    params.get('state') === provider.stateValue &&
			    params.get('iss') === provider._client?.issuer?.replace(/\/$/, ''),
			    `callback: ${params}`, `client issuer stamp: ${provider._client?.issuer}`);
			try {
				await transport.finishAuth(code);
				ok(`${T} transport.finishAuth(code) trades the code for tokens`);
			} catch (e) {
				notOk(`${T} transport.finishAuth(code) trades the code for tokens`,
				    `${e.stack ?? e}`);
				client = undefined;
			}
			await transport.close().catch(() => {});
		}
	}
	callback.close();
	if (client) {
		const before = log.length;
		transport = newTransport();
		client = newClient();
		try {
			await client.connect(transport);
			ok(`${T} a new transport connects with the token`);
		} catch (e) {
			notOk(`${T} a new transport connects with the token`, why(e));
			client = undefined;
		}
		const again = log.slice(before).filter(isMcp);
		check(`${T} ... with no 401: every MCP request carried the bearer token ` +
		    `(${again.map(e => `${e.method} ${e.status ?? '(open)'}`).join(', ')})`,
		    again.length > 0 && again.every(e => e.status !== 401 &&
		    /^Bearer /.test(e.headers.authorization ?? '')), brief(again));
	}
}

// --- what the SDK did, from the recorded requests ---------------------------

await attempt(`${T} the recorded requests`, async () => {
	const first = log[0];
	const www = first?.rheaders?.['www-authenticate'] ?? '';
	const rm = /resource_metadata="([^"]+)"/.exec(www)?.[1];
	if (!check(`${T} the first request, ${first?.method} ${first?.url}, got 401 ` +
	    `with WWW-Authenticate: Bearer resource_metadata=... (${www})`,
	    first && isMcp(first) && first.status === 401 && /^Bearer /i.test(www) &&
	    rm, brief(first)))
		return;	// nothing else to look at
	const second = log[1];
	check(`${T} the SDK then fetched the protected resource metadata ` +
	    `at that URL (${second?.method} ${second?.url} -> ${second?.status})`,
	    rm && second?.method === 'GET' && second.url === rm &&
	    second.status === 200, brief(second));
	const asMeta = log.find(e => e.status === 200 &&
	    /\/\.well-known\/(oauth-authorization-server|openid-configuration)/.test(e.url));
	const tried = log.filter(e => /\/\.well-known\//.test(e.url))
	    .map(e => `${new URL(e.url).pathname} ${e.status}`);
	check(`${T} and found the authorization server's metadata ` +
	    `(${tried.join(', ')})`, asMeta, brief(log.slice(0, 6)));

	if (!CC) {
		registration = log.find(e => e.method === 'POST' &&
		    provider._discovery?.authorizationServerMetadata?.registration_endpoint === e.url);
		let regBody;
		try {
			regBody = JSON.parse(registration?.body ?? 'null');
		} catch {}
		check(`${T} the SDK registered a client dynamically (RFC 7591): ` +
		    `POST ${registration?.url} -> ${registration?.status}, ` +
		    `client_id ${provider._client?.client_id}, ` +
		    `token_endpoint_auth_method ${provider._client?.token_endpoint_auth_method}`,
		    registration?.status === 201 && provider._client?.client_id &&
		    provider.calls.includes('saveClientInformation'),
		    brief(registration), brief(provider._client));
		diag(`registration request: ${brief(regBody, 1000)}`);
		const a = provider.authorizationUrl?.searchParams ?? new URLSearchParams();
		diag(`authorization request: ${provider.authorizationUrl}`);
		const challenge = a.get('code_challenge');
		check(`${T} the authorization request has PKCE: ` +
		    `code_challenge_method=${a.get('code_challenge_method')}, a code_challenge`,
		    a.get('code_challenge_method') === 'S256' &&
		    /^[A-Za-z0-9_-]{43}$/.test(challenge ?? ''));
		check(`${T} ... response_type=code, client_id = the registered one, ` +
		    `redirect_uri = ${a.get('redirect_uri')}, state`,
		    a.get('response_type') === 'code' &&
		    a.get('client_id') === provider._client?.client_id &&
		    a.get('redirect_uri') === provider.redirectUrl &&
		    a.get('state') === provider.stateValue);
		check(`${T} ... and resource = the MCP URL (${a.get('resource')}), ` +
		    `scope ${a.get('scope')}`, a.get('resource') === mcpUrl.href,
		    `resource: ${a.getAll('resource')}`);
		tokenRequest = log.find(e => e.method === 'POST' &&
		    /grant_type=authorization_code/.test(e.body ?? ''));
		const t = new URLSearchParams(tokenRequest?.body ?? '');
		const verifier = t.get('code_verifier') ?? '';
		check(`${T} the token request (POST ${tokenRequest?.url}) has the ` +
		    `code_verifier of the challenge, the code and redirect_uri`,
		    challenge && createHash('sha256').update(verifier).digest('base64url') ===
		    challenge && t.get('code') && t.get('redirect_uri') === provider.redirectUrl,
		    brief(tokenRequest));
		check(`${T} ... and resource = the MCP URL (${t.get('resource')})`,
		    t.get('resource') === mcpUrl.href, `resource: ${t.getAll('resource')}`);
		diag(`token request: ${t.has('client_secret') ? 'client_secret in the body, ' : ''}` +
		    `Authorization ${tokenRequest?.headers?.authorization ? tokenRequest.headers.authorization.split(' ')[0] : 'none'}; ` +
		    `fields ${[...t.keys()].join(' ')}`);
	} else {
		tokenRequest = log.find(e => e.method === 'POST' &&
		    /grant_type=client_credentials/.test(e.body ?? ''));
		const t = new URLSearchParams(tokenRequest?.body ?? '');
		check(`${T} the token request (POST ${tokenRequest?.url}): ` +
		    `grant_type=client_credentials, scope=${t.get('scope')}, HTTP Basic ` +
		    `client authentication, resource = the MCP URL (${t.get('resource')})`,
		    tokenRequest?.status === 200 && t.get('scope') === o.scope &&
		    /^Basic /.test(tokenRequest.headers.authorization ?? '') &&
		    t.get('resource') === mcpUrl.href, brief(tokenRequest));
	}

	const tok = provider.tokens?.();
	const jwt = jwtParts(tok?.access_token ?? '');
	const p = jwt?.payload ?? {};
	const aud = Array.isArray(p.aud) ? p.aud : [p.aud];
	const issuer = provider._client?.issuer ?? provider._clientInfo?.issuer;
	diag(`access token: ${JSON.stringify(jwt?.header)} ${JSON.stringify(p)}`);
	const { issuer: stamp, ...response } = tok ?? {};
	diag(`token response: ${JSON.stringify({ ...response, access_token: '...',
	    refresh_token: tok?.refresh_token && '...' })} (the SDK stamped it ` +
	    `with issuer ${stamp})`);
	check(`${T} a token came: a JWT (${brief(jwt?.header)}), ` +
	    `aud ${brief(p.aud)}, iss ${p.iss}, scope "${p.scope}", sub ${p.sub}, ` +
	    `client_id ${p.client_id}, expires in ${p.exp - p.iat} s` +
	    (tok?.refresh_token ? ', and a refresh token' : ''),
	    jwt && jwt.header.typ === 'at+jwt' && aud.includes(mcpUrl.href) &&
	    p.iss?.replace(/\/$/, '') === String(issuer ?? '').replace(/\/$/, '') &&
	    String(p.scope ?? '').split(' ').includes('mcp:tools') &&
	    p.exp > Date.now() / 1000, brief(tok, 2000));
	if (!CC)
		check(`${T} its sub is the login, ${o.login}`, p.sub === o.login, brief(p));
});

// --refresh: once the access token has expired, the next call gets 401
// (error="invalid_token") and the SDK gets a new token by itself: with the
// refresh token (code flow) or the client credentials again; the call
// goes through on the same session.
async function refresh() {
	const old = provider.tokens();
	const exp = jwtParts(old?.access_token ?? '')?.payload?.exp ?? 0;
	const wait = exp * 1000 - Date.now() + 1500;
	if (wait > 60000) {
		notOk(`${T} --refresh wants an access token that expires within a minute ` +
		    `(the provider's --ttl), not in ${Math.round(wait / 1000)} s`);
		return;
	}
	diag(`waiting ${(wait / 1000).toFixed(1)} s for the access token to expire`);
	await sleep(Math.max(wait, 0));
	const before = log.length;
	const r = await client.callTool({ name: o.tool, arguments: toolArgs });
	const after = log.slice(before);
	const denied = after.find(e => isMcp(e) && e.status === 401);
	check(`${T} with the token expired, the server answers 401 (${
	    denied?.rheaders?.['www-authenticate']})`, denied &&
	    /error="invalid_token"/.test(denied.rheaders['www-authenticate'] ?? ''),
	    brief(after.map(e => `${e.method} ${e.url} ${e.status}`)));
	const grant = CC ? 'client_credentials' : 'refresh_token';
	const t = after.find(e => e.method === 'POST' &&
	    new URLSearchParams(e.body ?? '').get('grant_type') === grant);
	const tp = new URLSearchParams(t?.body ?? '');
	check(`${T} and the SDK gets a new token by itself: grant_type=${grant}, ` +
	    `resource = the MCP URL (${tp.get('resource')}) -> ${t?.status}`,
	    t?.status === 200 && tp.get('resource') === mcpUrl.href, brief(t));
	const now = provider.tokens();
	const np = jwtParts(now?.access_token ?? '')?.payload ?? {};
	check(`${T} the new access token is another, good for ${np.exp - Math.floor(Date.now() / 1000)} s more`,
	    now?.access_token !== old.access_token && np.exp > Date.now() / 1000,
	    brief(np));
	check(`${T} the call goes through with it, on the same session: ` +
	    `"${textOf(r).trim().slice(0, 100)}"`, !r.isError &&
	    textOf(r).includes(o.expect) && after.filter(isMcp).every(e =>
	    e.headers['mcp-session-id'] === after.find(isMcp)?.headers['mcp-session-id']),
	    brief(r));
}

// --- MCP with the token ---------------------------------------------------------

if (client) {
	await attempt(`${T} tools/list`, async () => {
		const { tools } = await client.listTools();
		const names = tools.map(t => t.name);
		check(`${T} tools/list works and lists ${o.tool} (${names.length} tools)`,
		    names.includes(o.tool), `listed: ${names}`);
	});
	await attempt(`${T} tools/call ${o.tool}`, async () => {
		const r = await client.callTool({ name: o.tool, arguments: toolArgs });
		check(`${T} tools/call ${o.tool} ${o.args}: the answer has ` +
		    `"${o.expect}" (${textOf(r).trim().slice(0, 100)})`,
		    !r.isError && textOf(r).includes(o.expect), brief(r));
	});
	if (o.refresh)
		await attempt(`${T} --refresh`, refresh);
	await client.close().catch(() => {});
}
diag(`provider calls: ${provider?.calls?.join(' ') ?? '-'}`);
finish();
process.exit(0);
