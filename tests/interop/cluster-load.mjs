// Load on several hosts behind one balancer, from the official MCP
// TypeScript SDK: each tenant a client of its own, all at once, calling
// run_code one call after another until a stop file appears.  A call that
// fails is written down and the client starts again (a new session: the
// balancer may have sent it to another host) and goes on, as a client
// application would.
//
//	node cluster-load.mjs --url URL --tokens JSON --stop FILE --out FILE
//	    [--pace MS]
//
// A client waits MS (0 by default) between calls, as an agent thinks.
// tokens: {"t1": "TOKEN", ...}.  out gets one JSON object a tenant:
// {tenant, calls, ok, failed: [{at, message}], reconnects}, at in ms
// since the start; stdout the usual "ok"/"not ok" lines and "done".

import fs from 'node:fs';
import { brief, connect, finish, notOk, ok, options, sleep, textOf }
    from './lib.mjs';

const o = options();
const tokens = JSON.parse(o.tokens);
const t0 = Date.now();
const pace = Number(o.pace ?? 0);
const stopped = () => fs.existsSync(o.stop);

async function session(token) {
	for (;;) {
		try {
			return await connect({ transport: 'http', url: o.url,
			    token }, 'cluster-load');
		} catch (e) {
			// No host for this tenant this instant: try again.
			if (stopped())
				return null;
			await sleep(200);
		}
	}
}

async function tenant(name, token) {
	const st = { tenant: name, calls: 0, ok: 0, failed: [],
	    reconnects: 0 };
	let c = await session(token);
	while (c !== null && !stopped()) {
		st.calls++;
		let why = null;
		try {
			const r = await c.callTool({ name: 'run_code',
			    arguments: { language: 'sh', code: 'echo ok' } });
			if (r.isError || textOf(r).indexOf('ok') === -1)
				why = `error result: ${brief(r, 300)}`;
		} catch (e) {
			why = `${e.message ?? e}`.slice(0, 400);
		}
		if (pace > 0)
			await sleep(pace);
		if (why === null) {
			st.ok++;
			continue;
		}
		st.failed.push({ at: Date.now() - t0, message: why });
		try {
			await c.close();
		} catch (e) {
			// gone with its host
		}
		st.reconnects++;
		c = await session(token);
	}
	if (c !== null)
		await c.close().catch(() => {});
	return st;
}

try {
	const all = await Promise.all(Object.entries(tokens).map(
	    ([name, token]) => tenant(name, token)));
	fs.writeFileSync(o.out, all.map(s => JSON.stringify(s)).join('\n') +
	    '\n');
	ok(`${all.length} SDK clients ran ${all.reduce((n, s) => n + s.calls,
	    0)} calls through the balancer`);
} catch (e) {
	notOk('the SDK clients ran', `${e.stack || e}`);
}
finish();
