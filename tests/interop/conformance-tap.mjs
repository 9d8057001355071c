// Turn a run of the MCP conformance suite ("conformance server ...") into
// one "ok"/"not ok" line per scenario for tests/integration/interop.sh.
//
//	node conformance-tap.mjs --label LABEL --log OUTPUT --dir RESULTS
//
// OUTPUT is what the suite printed; RESULTS the directory given to its -o,
// holding server-SCENARIO-TIMESTAMP/checks.json for each scenario run.
// The summary is read as the suite prints it:
//	✓ scenario: N passed, M failed[, W warnings]
//	Total: N passed, M failed
// and, from the alpha suite with --requirements, the scenarios it ran but
// does not score:
//	Not scored for REV: K scenario(s) run, F failing. ...
//	  ✓ scenario (reason)
// Every scenario is a line, scored or not; a failing one is "not ok" with
// its failed checks as diagnostics.

import fs from 'node:fs';
import path from 'node:path';
import { check, diag, finish, notOk, ok, options } from './lib.mjs';

const o = options();
const L = o.label;
const text = fs.readFileSync(o.log, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const lines = text.split('\n');

// The checks.json of every scenario, by scenario name.
const checks = new Map();
for (const d of fs.existsSync(o.dir) ? fs.readdirSync(o.dir) : []) {
	const m = /^server-(.*)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(d);
	const f = path.join(o.dir, d, 'checks.json');
	if (m && fs.existsSync(f)) {
		try {
			checks.set(m[1], JSON.parse(fs.readFileSync(f, 'utf8')));
		} catch (e) {
			checks.set(m[1], [{ status: 'FAILURE', name: 'checks.json',
			    errorMessage: `unreadable: ${e}` }]);
		}
	}
}

const start = lines.lastIndexOf('=== SUMMARY ===');
const scenarios = [];
let total;
const notScored = new Map();
if (start !== -1) {
	let inNotScored = false;
	for (const line of lines.slice(start + 1)) {
		let m;
		if ((m = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?$/.exec(line)))
			scenarios.push({ mark: m[1], name: m[2], passed: +m[3],
			    failed: +m[4], warnings: +(m[5] ?? 0) });
		else if ((m = /^Total: (\d+) passed, (\d+) failed/.exec(line)))
			total = { passed: +m[1], failed: +m[2] };
		else if (/^Not scored for /.test(line))
			inNotScored = true;
		else if (inNotScored &&
		    (m = /^\s+([✓✗]) (\S+) \((.*)\)$/.exec(line)))
			notScored.set(m[2], { mark: m[1], reason: m[3] });
	}
}

if (!check(`conformance ${L}: the suite prints its summary, ` +
    `${scenarios.length} scenarios` + (total ? `, total ${total.passed} ` +
    `passed, ${total.failed} failed` : ''), scenarios.length > 0 && total,
    ...lines.slice(-15))) {
	finish();
	process.exit(0);
}

function details(name) {
	const cs = checks.get(name);
	if (!cs) {
		diag(`no checks.json for ${name} in ${o.dir}`);
		return;
	}
	for (const c of cs.filter(c => c.status !== 'SUCCESS')) {
		diag(`${c.status} ${c.id ?? ''} ${c.name ?? ''}: ` +
		    `${c.errorMessage ?? c.description ?? ''}`);
		if (c.details)
			diag(`  details: ${JSON.stringify(c.details).slice(0, 800)}`);
	}
}

let sumPassed = 0, sumFailed = 0;
for (const s of scenarios) {
	sumPassed += s.passed;
	sumFailed += s.failed;
	const ns = notScored.get(s.name);
	const cs = checks.get(s.name) ?? [];
	const skipped = cs.filter(c => c.status === 'SKIPPED');
	const warned = cs.filter(c => c.status === 'WARNING');
	const failedJson = cs.filter(c => c.status === 'FAILURE');
	let desc = `conformance ${L}: ${s.name} (${s.passed} passed, ` +
	    `${s.failed} failed${s.warnings ? `, ${s.warnings} warnings` : ''})` +
	    (ns ? ` [not scored: ${ns.reason}]` : '');
	const good = s.mark === '✓' && s.failed === 0 &&
	    failedJson.length === 0 && (!ns || ns.mark === '✓');
	if (good) {
		ok(desc);
		// A scenario the suite itself skips, or that warns, passes;
		// say why.
		for (const c of [...skipped, ...warned])
			diag(`${c.status} ${c.id ?? c.name}: ${c.errorMessage ?? ''}`);
	} else {
		notOk(desc);
		details(s.name);
	}
}
for (const [name, ns] of notScored)
	if (!scenarios.some(s => s.name === name))
		check(`conformance ${L}: not-scored ${name} (${ns.reason})`,
		    ns.mark === '✓', `not in the summary above`);
check(`conformance ${L}: the scenario lines add up to the total`,
    sumPassed === total.passed && sumFailed === total.failed,
    `lines: ${sumPassed} passed, ${sumFailed} failed`);
finish();
