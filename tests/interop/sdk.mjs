// mcpd driven by the official MCP TypeScript SDK's Client over one
// transport: the handshake, the tool list, one-shot runs, a persistent
// sandbox with its files and resources, progress, and cancellation.
//
//	node sdk.mjs --transport stdio|http|sse --tag NAME
//	    [--url URL --token TOKEN] [--command PATH --args JSON --stderr LOG]
//
// Prints "ok"/"not ok" lines for tests/integration/interop.sh; see lib.mjs.

import {
	attempt, brief, check, connect, finish, notOk, ok, options,
	sleep, textOf,
} from './lib.mjs';
import {
	LATEST_PROTOCOL_VERSION, ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const o = options();
const tag = o.tag || o.transport;
const T = `(${tag})`;

const BASE_TOOLS = ['run_code', 'sandbox_create', 'sandbox_exec',
    'sandbox_write_file', 'sandbox_read_file', 'sandbox_list_files',
    'sandbox_delete_file', 'sandbox_stop', 'sandbox_list', 'list_languages'];
const STDIO_TOOLS = ['sandbox_upload', 'sandbox_download'];
// The tools that answer with nothing but words.
const UNSTRUCTURED = ['sandbox_stop'];

// A 1x1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let client;
let version;
try {
	client = await connect(o, `mcpd-interop-${tag}`);
	version = client.negotiatedVersion;
	ok(`${T} the SDK client connects: initialize handshake with ` +
	    `${client.getServerVersion()?.name} ${client.getServerVersion()?.version}, ` +
	    `protocol ${version}`);
} catch (e) {
	notOk(`${T} the SDK client connects`, `${e.stack || e}`);
	finish();
	process.exit(1);
}

check(`${T} mcpd agrees on the SDK's latest protocol version, ` +
    `${LATEST_PROTOCOL_VERSION} (${version})`,
    version === LATEST_PROTOCOL_VERSION);

const call = (name, args, opts) =>
    client.callTool({ name, arguments: args }, undefined, opts);

// --- the tool list ---------------------------------------------------

const structuredOut = version >= '2025-06-18';
await attempt(`${T} tools/list`, async () => {
	const { tools } = await client.listTools();
	const names = tools.map(t => t.name);
	const want = o.transport === 'stdio' ?
	    [...BASE_TOOLS, ...STDIO_TOOLS] : BASE_TOOLS;
	const missing = want.filter(n => !names.includes(n));
	check(`${T} tools/list has the ${want.length} tools`,
	    missing.length === 0, `missing: ${missing}`, `listed: ${names}`);
	if (o.transport !== 'stdio') {
		const extra = STDIO_TOOLS.filter(n => names.includes(n));
		check(`${T} sandbox_upload and sandbox_download are for stdio ` +
		    `clients alone`, extra.length === 0, `listed: ${extra}`);
	}
	const bad = [];
	for (const t of tools.filter(t => want.includes(t.name))) {
		if (typeof t.description !== 'string' || t.description.length < 10)
			bad.push(`${t.name}: no description`);
		if (t.inputSchema?.type !== 'object')
			bad.push(`${t.name}: inputSchema ${brief(t.inputSchema)}`);
		if (structuredOut && !UNSTRUCTURED.includes(t.name) &&
		    t.outputSchema?.type !== 'object')
			bad.push(`${t.name}: no outputSchema`);
	}
	check(`${T} each has a description and an inputSchema` +
	    (structuredOut ? ', and an outputSchema where it returns ' +
	    'structured data' : ''), bad.length === 0, ...bad);
});

// --- one-shot runs ---------------------------------------------------

async function run(desc, args, want) {
	await attempt(`${T} ${desc}`, async () => {
		const r = await call('run_code', args);
		const s = r.structuredContent ?? {};
		const good = s.stdout === want.stdout &&
		    s.exit_code === want.exit_code &&
		    !!r.isError === want.isError &&
		    textOf(r).includes(want.stdout);
		check(`${T} ${desc}: stdout ${JSON.stringify(s.stdout)}, ` +
		    `exit_code ${s.exit_code}, isError ${!!r.isError}`, good,
		    `result: ${brief(r)}`);
	});
}

await run('run_code python print(6*7)',
    { language: 'python', code: 'print(6*7)' },
    { stdout: '42\n', exit_code: 0, isError: false });
await run('run_code javascript console.log(1+1)',
    { language: 'javascript', code: 'console.log(1+1)' },
    { stdout: '2\n', exit_code: 0, isError: false });
await run('run_code sh "echo hi; exit 3" is an error result',
    { language: 'sh', code: 'echo hi; exit 3' },
    { stdout: 'hi\n', exit_code: 3, isError: true });

await attempt(`${T} list_languages`, async () => {
	const r = await call('list_languages', {});
	const names = (r.structuredContent?.languages ?? []).map(l => l.name);
	check(`${T} list_languages names python, javascript and sh ` +
	    `(${names})`, ['python', 'javascript', 'sh'].every(n =>
	    names.includes(n)), brief(r));
});

// --- a persistent sandbox --------------------------------------------

const name = `interop-${tag}-${process.pid}`;
let id;
await attempt(`${T} a persistent sandbox`, async () => {
	let r = await call('sandbox_create', { name });
	id = r.structuredContent?.id;
	if (!check(`${T} sandbox_create {name: "${name}"} answers an id (${id})`,
	    !r.isError && /^([a-z0-9-]+~)?[0-9a-f]{32}$/.test(id ?? ''),
	    brief(r)))
		return;

	r = await call('sandbox_write_file',
	    { sandbox: name, path: 'dir/f.txt', content: 'hello' });
	check(`${T} sandbox_write_file dir/f.txt (${textOf(r)})`,
	    !r.isError && r.structuredContent?.bytes === 5, brief(r));

	// Subscribed to the logs as resources/list names them (by id), the
	// client hears them grow when it works in the sandbox by its name.
	const logsUri = `sandbox://${id}/logs`;
	const updated = [];
	client.setNotificationHandler(ResourceUpdatedNotificationSchema,
	    n => updated.push(n.params.uri));
	await client.subscribeResource({ uri: logsUri });

	r = await call('sandbox_exec', { sandbox: name, command: 'cat dir/f.txt' });
	const res0 = r.structuredContent?.results?.[0];
	check(`${T} sandbox_exec "cat dir/f.txt" prints it ` +
	    `(${JSON.stringify(res0?.stdout)})`,
	    !r.isError && res0?.stdout === 'hello' && res0?.exit_code === 0 &&
	    r.structuredContent?.all_succeeded === true, brief(r));

	for (let i = 0; i < 20 && !updated.includes(logsUri); i++)
		await sleep(100);
	check(`${T} subscribed to ${logsUri}, the client hears ` +
	    `notifications/resources/updated for it after sandbox_exec ` +
	    `{sandbox: "${name}"}`, updated.includes(logsUri),
	    `updates heard: ${brief(updated)}`);
	await client.unsubscribeResource({ uri: logsUri });

	r = await call('sandbox_list_files', { sandbox: name, recursive: true });
	const entries = r.structuredContent?.entries ?? [];
	const f = entries.find(e => e.name === 'dir/f.txt');
	check(`${T} sandbox_list_files, recursive, lists dir/f.txt ` +
	    `(${entries.map(e => e.name)})`,
	    !r.isError && f?.type === 'file' && f?.size === 5, brief(r));

	r = await call('sandbox_read_file', { sandbox: name, path: 'dir/f.txt' });
	check(`${T} sandbox_read_file gives back the text ` +
	    `(${JSON.stringify(textOf(r))})`, !r.isError &&
	    r.content?.length === 1 && r.content[0].type === 'text' &&
	    r.content[0].text === 'hello', brief(r));

	r = await call('sandbox_write_file', { sandbox: name,
	    path: 'img/dot.png', content: PNG, encoding: 'base64' });
	check(`${T} sandbox_write_file of a PNG in base64`,
	    !r.isError && r.structuredContent?.bytes ===
	    Buffer.from(PNG, 'base64').length, brief(r));
	r = await call('sandbox_read_file', { sandbox: name, path: 'img/dot.png' });
	const img = (r.content ?? []).find(c => c.type === 'image');
	check(`${T} sandbox_read_file of it is an image block, image/png, ` +
	    `the same bytes`, !r.isError && img?.mimeType === 'image/png' &&
	    img?.data === PNG, brief(r));

	r = await call('sandbox_delete_file', { sandbox: name, path: 'img/dot.png' });
	const gone = await call('sandbox_read_file',
	    { sandbox: name, path: 'img/dot.png' });
	check(`${T} sandbox_delete_file removes it (then reading it is an ` +
	    `error: ${textOf(gone)})`, !r.isError && gone.isError === true,
	    brief(r), brief(gone));

	r = await call('sandbox_list', {});
	const mine = (r.structuredContent?.sandboxes ?? []).find(s => s.id === id);
	check(`${T} sandbox_list shows it, by id and name`,
	    !r.isError && mine?.name === name, brief(r, 1500));

	const { resources } = await client.listResources();
	const uris = resources.map(x => x.uri);
	check(`${T} resources/list has sandbox://${id}/logs and /state`,
	    uris.includes(`sandbox://${id}/logs`) &&
	    uris.includes(`sandbox://${id}/state`), `uris: ${uris}`);

	const logs = await client.readResource({ uri: `sandbox://${name}/logs` });
	const text = (logs.contents ?? []).map(c => c.text ?? '').join('');
	check(`${T} resources/read sandbox://${name}/logs has the command ` +
	    `and its output`, text.includes('$ cat dir/f.txt') &&
	    text.includes('hello'), brief(logs));

	const st = await client.readResource({ uri: `sandbox://${id}/state` });
	let state;
	try {
		state = JSON.parse(st.contents?.[0]?.text ?? '');
	} catch (e) {
		state = undefined;
	}
	check(`${T} resources/read sandbox://${id}/state is JSON about it`,
	    state?.id === id && state?.name === name, brief(st));

	r = await call('sandbox_stop', { sandbox: name });
	check(`${T} sandbox_stop (${textOf(r)})`, !r.isError, brief(r));
	r = await call('sandbox_exec', { sandbox: name, command: 'true' });
	check(`${T} sandbox_exec on a stopped sandbox is an error result ` +
	    `(${textOf(r)})`, r.isError === true, brief(r));
	id = undefined;
});
if (id !== undefined)	/* a check above threw half-way */
	await client.callTool({ name: 'sandbox_stop',
	    arguments: { sandbox: id } }).catch(() => {});

// --- progress ----------------------------------------------------------

await attempt(`${T} progress`, async () => {
	const lines = Array.from({ length: 8 }, (_, i) => `line ${i}`);
	const code = 'import time\nfor i in range(8):\n' +
	    '    print(f"line {i}", flush=True)\n    time.sleep(0.2)\n';
	const seen = [];
	const r = await call('run_code', { language: 'python', code }, {
		onprogress: p => seen.push(p),
		resetTimeoutOnProgress: true,
		timeout: 20000,
	});
	const incr = seen.every((p, i) => i === 0 ||
	    p.progress > seen[i - 1].progress);
	const msgs = seen.map(p => p.message ?? '').join('');
	const missing = lines.filter(l => !msgs.includes(l));
	check(`${T} run_code with a progress token: ${seen.length} progress ` +
	    `notifications over ~1.6 s (at least 3)`, seen.length >= 3,
	    `progress: ${brief(seen, 1500)}`);
	check(`${T} progress strictly increases`, seen.length > 0 && incr,
	    `progress: ${brief(seen.map(p => p.progress))}`);
	check(`${T} the progress messages carry the output as it is printed`,
	    missing.length === 0, `missing: ${missing}`,
	    `messages: ${JSON.stringify(msgs)}`);
	check(`${T} and the result has all of it`,
	    r.structuredContent?.stdout === lines.join('\n') + '\n',
	    brief(r));
});

// --- cancellation -------------------------------------------------------

// Abort a request after ms; resolve to what became of it.
async function aborted(name, args, ms) {
	const ac = new AbortController();
	const t0 = Date.now();
	const p = call(name, args, { signal: ac.signal, timeout: 120000 });
	await sleep(ms);
	ac.abort('interop test cancels it');
	try {
		const r = await p;
		return { resolved: r, ms: Date.now() - t0 };
	} catch (e) {
		return { rejected: e, ms: Date.now() - t0 };
	}
}

await attempt(`${T} cancellation`, async () => {
	let a = await aborted('run_code', { language: 'python',
	    code: 'import time; time.sleep(60)' }, 1000);
	check(`${T} run_code sleeping 60 s, aborted after 1 s: the request ` +
	    `rejects (${a.ms} ms: ${a.rejected})`, a.rejected !== undefined &&
	    a.ms < 5000, `resolved: ${brief(a.resolved)}`);

	const cname = `cancel-${tag}-${process.pid}`;
	let r = await call('sandbox_create', { name: cname });
	if (!check(`${T} sandbox_create ${cname}`, !r.isError, brief(r)))
		return;
	// An emulated machine (TIME_SCALE, as tests/lib.sh's) starts the
	// command later: every delay grows with it.
	const k = Math.max(1, Number(process.env.TIME_SCALE) || 1);
	a = await aborted('sandbox_exec', { sandbox: cname,
	    command: `touch m1; sleep ${3 * k}; touch m2` }, 1000 * k);
	check(`${T} sandbox_exec "touch m1; sleep ${3 * k}; touch m2" aborted ` +
	    `after ${k} s rejects (${a.ms} ms)`, a.rejected !== undefined &&
	    a.ms < 3000 * k, `resolved: ${brief(a.resolved)}`);
	await sleep(4000 * k);
	r = await call('sandbox_exec', { sandbox: cname, command: 'ls' });
	const out = r.structuredContent?.results?.[0]?.stdout ?? '';
	const files = out.split('\n').filter(Boolean);
	check(`${T} the command had started (m1 is there: ${files})`,
	    files.includes('m1'), brief(r));
	check(`${T} and was killed: m2 never appears, ${4 * k} s later`,
	    files.includes('m1') && !files.includes('m2'), brief(r));
	r = await call('sandbox_stop', { sandbox: cname });
	check(`${T} sandbox_stop ${cname}`, !r.isError, brief(r));
});

// --- the end -------------------------------------------------------------

await attempt(`${T} close`, async () => {
	await client.close();
	ok(`${T} the client closes the connection`);
});
finish();
