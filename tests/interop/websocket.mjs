// The official TypeScript SDK's WebSocketClientTransport against mcpd's
// WebSocket transport (SEP-1288, a draft), for tests/integration/websocket.sh.
//
//	node websocket.mjs --url wss://127.0.0.1:PORT --token TOKEN
//
// The SDK opens Node's WebSocket (undici's) with the subprotocol "mcp" and
// no way to set a header, as a browser's: its token goes as the draft's
// subprotocol "mcp.auth.TOKEN" beside it, which this script adds by
// wrapping the global WebSocket the SDK uses.  TLS is trusted through
// NODE_EXTRA_CA_CERTS, set by the caller.  It connects to /ws and to /mcp
// (the MCP path, upgraded), lists the tools, runs code, sees a tool's
// error come back as one, and that a wrong token and no token are refused.
// Output: lib.mjs's lines, "done" last.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { attempt, check, diag, finish, textOf } from './lib.mjs';

function arg(name, def) {
	const i = process.argv.indexOf(`--${name}`);
	return i > 0 ? process.argv[i + 1] : def;
}
const base = arg('url');
const token = arg('token');
let extra = [];		// the subprotocols added to the SDK's "mcp"

const NodeWebSocket = globalThis.WebSocket;
globalThis.WebSocket = class extends NodeWebSocket {
	constructor(url, protocols) {
		super(url, [].concat(protocols ?? [], extra));
	}
};

async function session(path) {
	const client = new Client({ name: 'mcpd-interop-websocket', version: '1.0.0' });
	const transport = new WebSocketClientTransport(new URL(path, base));
	await client.connect(transport);
	return { client, transport };
}

extra = [`mcp.auth.${token}`];
for (const path of ['/ws', '/mcp']) {
	const s = await attempt(`${path}: the SDK's WebSocketClientTransport connects with the token as a subprotocol`,
	    () => session(path));
	if (s === undefined)
		continue;
	check(`${path}: the socket's subprotocol is mcp alone (${s.transport._socket.protocol})`,
	    s.transport._socket.protocol === 'mcp');
	check(`${path}: initialize told the server's name (${s.client.getServerVersion()?.name})`,
	    s.client.getServerVersion()?.name === 'mcpd');
	const tools = await attempt(`${path}: tools/list`, () => s.client.listTools());
	check(`${path}: tools/list has run_code (${tools?.tools?.length} tools)`,
	    tools?.tools?.some(t => t.name === 'run_code'));
	const res = await attempt(`${path}: tools/call run_code`, () => s.client.callTool({
		name: 'run_code', arguments: { language: 'python', code: 'print(6 * 7)' } }));
	check(`${path}: run_code's answer has 42`, /\b42\b/.test(textOf(res)), textOf(res));
	const bad = await attempt(`${path}: tools/call of a language that does not exist`,
	    () => s.client.callTool({ name: 'run_code', arguments: { language: 'cobol-74', code: 'x' } }));
	check(`${path}: ... is a tool error (isError), and the socket stays`, bad?.isError === true, bad);
	const again = await attempt(`${path}: another call on the same socket`, () => s.client.callTool({
		name: 'run_code', arguments: { language: 'sh', code: 'echo again' } }));
	check(`${path}: ... answered`, /again/.test(textOf(again)), textOf(again));
	await s.client.close();
}

// refused(desc, subprotocols): the handshake fails.
async function refused(desc, protos) {
	extra = protos;
	let err;
	try {
		const s = await session('/ws');
		await s.client.close();
	} catch (e) {
		err = e;
	}
	check(desc, err !== undefined, 'it connected');
	if (err !== undefined)
		diag(`error: ${err?.message ?? err}`);
}
await refused('a wrong token in the subprotocol is refused', ['mcp.auth.not-a-token']);
await refused('no token at all is refused', []);

finish();
