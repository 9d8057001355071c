// Two tenants of one mcpd cannot see or touch each other's sandboxes,
// with the official MCP TypeScript SDK as the client of both.
//
//	node tenants.mjs --tag NAME --alice JSON --bob JSON
//
// Each JSON holds the connection options of lib.mjs's makeTransport
// (transport, url, token, or command, args, stderr).  Prints "ok"/"not ok"
// lines for tests/integration/interop.sh.

import {
	attempt, brief, check, connect, finish, notOk, ok, options,
	textOf,
} from './lib.mjs';

const o = options();
const T = `(${o.tag})`;
const SHARED = `shared-name-${process.pid}`;

let alice, bob;
try {
	alice = await connect(JSON.parse(o.alice), 'interop-alice');
	bob = await connect(JSON.parse(o.bob), 'interop-bob');
	ok(`${T} alice and bob connect`);
} catch (e) {
	notOk(`${T} alice and bob connect`, `${e.stack || e}`);
	finish();
	process.exit(1);
}

const call = (c, name, args) => c.callTool({ name, arguments: args });
const listed = async c => {
	const r = await call(c, 'sandbox_list', {});
	if (r.isError || !Array.isArray(r.structuredContent?.sandboxes))
		throw new Error(`sandbox_list failed: ${brief(r)}`);
	return r.structuredContent.sandboxes;
};
const ids = [];

await attempt(`${T} two tenants`, async () => {
	let r = await call(alice, 'sandbox_create', { name: SHARED });
	const a = r.structuredContent?.id;
	if (!check(`${T} alice creates sandbox "${SHARED}" (${a})`,
	    !r.isError && /^[0-9a-f]{32}$/.test(a ?? ''), brief(r)))
		return;
	ids.push([alice, a]);
	r = await call(alice, 'sandbox_write_file',
	    { sandbox: SHARED, path: 'owner', content: 'alice' });
	check(`${T} alice writes a file in it`, !r.isError, brief(r));

	let bl = await listed(bob);
	check(`${T} bob's sandbox_list does not show it ` +
	    `(${bl.map(s => s.name ?? s.id)})`,
	    !bl.some(s => s.id === a || s.name === SHARED), brief(bl));

	r = await call(bob, 'sandbox_exec', { sandbox: a, command: 'cat owner' });
	check(`${T} bob's sandbox_exec on alice's id is an error result: ` +
	    `no such sandbox (${textOf(r)})`, r.isError === true &&
	    /no (such )?sandbox/i.test(textOf(r)) &&
	    !JSON.stringify(r).includes('alice'), brief(r));
	r = await call(bob, 'sandbox_exec', { sandbox: SHARED,
	    command: 'cat owner' });
	check(`${T} and on its name too (${textOf(r)})`, r.isError === true &&
	    /no (such )?sandbox/i.test(textOf(r)), brief(r));
	r = await call(bob, 'sandbox_read_file', { sandbox: a, path: 'owner' });
	check(`${T} bob cannot read alice's files (${textOf(r)})`,
	    r.isError === true && !textOf(r).includes('alice'), brief(r));
	r = await call(bob, 'sandbox_stop', { sandbox: a });
	check(`${T} bob cannot stop alice's sandbox (${textOf(r)})`,
	    r.isError === true, brief(r));
	let res;
	try {
		res = await bob.readResource({ uri: `sandbox://${a}/logs` });
	} catch (e) {
		res = e;
	}
	check(`${T} bob cannot read alice's sandbox://${a}/logs ` +
	    `(${res?.message ?? brief(res)})`, res instanceof Error, brief(res));
	const { resources } = await bob.listResources();
	check(`${T} nor does bob's resources/list show it`,
	    !resources.some(x => x.uri.includes(a)), brief(resources));

	r = await call(bob, 'sandbox_create', { name: SHARED });
	const b = r.structuredContent?.id;
	if (!check(`${T} bob creates his own "${SHARED}" (${b})`, !r.isError &&
	    /^[0-9a-f]{32}$/.test(b ?? '') && b !== a, brief(r)))
		return;
	ids.push([bob, b]);
	r = await call(bob, 'sandbox_exec', { sandbox: SHARED,
	    command: 'cat owner 2>/dev/null || echo nothing here' });
	check(`${T} bob's "${SHARED}" is his own, empty ` +
	    `(${JSON.stringify(r.structuredContent?.results?.[0]?.stdout)})`,
	    r.structuredContent?.results?.[0]?.stdout === 'nothing here\n',
	    brief(r));
	r = await call(alice, 'sandbox_exec', { sandbox: SHARED,
	    command: 'cat owner' });
	check(`${T} and alice's is still hers ` +
	    `(${JSON.stringify(r.structuredContent?.results?.[0]?.stdout)})`,
	    r.structuredContent?.results?.[0]?.stdout === 'alice', brief(r));

	const al = (await listed(alice)).filter(s => s.name === SHARED);
	bl = (await listed(bob)).filter(s => s.name === SHARED);
	check(`${T} each sees only their own "${SHARED}"`,
	    al.length === 1 && al[0].id === a && bl.length === 1 &&
	    bl[0].id === b, `alice: ${brief(al)}`, `bob: ${brief(bl)}`);
});

for (const [c, id] of ids) {
	await attempt(`${T} sandbox_stop ${id}`, async () => {
		const r = await call(c, 'sandbox_stop', { sandbox: id });
		check(`${T} sandbox_stop ${id}`, !r.isError, brief(r));
	});
}

// What the tests of every transport left: nothing, for either tenant.
await attempt(`${T} nothing left`, async () => {
	const left = [...await listed(alice), ...await listed(bob)];
	check(`${T} neither tenant has a sandbox left`, left.length === 0,
	    brief(left, 2000));
});

await alice.close().catch(() => {});
await bob.close().catch(() => {});
finish();
