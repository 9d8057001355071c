// Shared helpers of the interop scripts: TAP-like output for
// tests/integration/interop.sh, and MCP clients made with the official
// TypeScript SDK over each transport mcpd serves.
//
// Every script prints lines of three kinds on stdout, which the shell test
// numbers and counts:
//	ok DESCRIPTION
//	not ok DESCRIPTION
//	# a diagnostic
// and "done" as its last line when it got to the end.

import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

export let failures = 0;

function oneLine(s) {
	return String(s).replace(/\s+/g, ' ').trim();
}

export function ok(desc) {
	console.log(`ok ${oneLine(desc)}`);
}

export function notOk(desc, ...why) {
	failures++;
	console.log(`not ok ${oneLine(desc)}`);
	for (const w of why)
		diag(w);
}

export function diag(what) {
	const s = typeof what === 'string' ? what : JSON.stringify(what);
	for (const line of s.split('\n'))
		console.log(`#   ${line}`);
}

// check(desc, cond, ...diagnostics shown when it fails)
export function check(desc, cond, ...why) {
	if (cond)
		ok(desc);
	else
		notOk(desc, ...why);
	return !!cond;
}

export function sleep(ms) {
	return new Promise(r => setTimeout(r, ms));
}

// Run f; a throw is a failed check carrying the error.
export async function attempt(desc, f) {
	try {
		return await f();
	} catch (e) {
		notOk(desc, `threw: ${e && e.stack ? e.stack : e}`);
		return undefined;
	}
}

// Options from the command line: --key value pairs.
export function options(argv = process.argv.slice(2)) {
	const o = {};
	for (let i = 0; i < argv.length; i += 2) {
		if (!argv[i].startsWith('--') || i + 1 >= argv.length)
			throw new Error(`bad option ${argv[i]}`);
		o[argv[i].slice(2)] = argv[i + 1];
	}
	return o;
}

// A transport for mcpd: o.transport is stdio, http or sse.
//  stdio: o.command (the server), o.args (a JSON array), o.stderr (a log
//  file for the server's stderr); http and sse: o.url and o.token.
export function makeTransport(o) {
	const headers = o.token ? { Authorization: `Bearer ${o.token}` } : {};
	switch (o.transport) {
	case 'stdio':
		return new StdioClientTransport({
			command: o.command,
			args: Array.isArray(o.args) ? o.args :
			    JSON.parse(o.args || '[]'),
			env: { PATH: process.env.PATH || '/usr/bin:/bin' },
			stderr: o.stderr ? fs.openSync(o.stderr, 'a') : 'inherit',
		});
	case 'http':
		return new StreamableHTTPClientTransport(new URL(o.url),
		    { requestInit: { headers } });
	case 'sse':
		return new SSEClientTransport(new URL(o.url),
		    { requestInit: { headers } });
	default:
		throw new Error(`unknown transport ${o.transport}`);
	}
}

export async function connect(o, name = 'mcpd-interop') {
	const client = new Client({ name, version: '1.0.0' },
	    { capabilities: {} });
	const t = makeTransport(o);
	// The SDK hands the negotiated version to HTTP transports alone;
	// keep it for every transport.
	const set = t.setProtocolVersion?.bind(t);
	t.setProtocolVersion = v => {
		client.negotiatedVersion = v;
		set?.(v);
	};
	await client.connect(t);
	return client;
}

// The text of a tool result's text blocks, joined.
export function textOf(res) {
	return (res?.content ?? []).filter(c => c.type === 'text')
	    .map(c => c.text).join('');
}

export function brief(x, n = 600) {
	const s = JSON.stringify(x);
	return s === undefined ? 'undefined' :
	    s.length > n ? s.slice(0, n) + '...' : s;
}

export function finish() {
	console.log('done');
}
