/*
 * What the mcpd fuzz targets (jsonrpc, http) share: mcpd's state as main()
 * sets it up, and a sandboxd and an auditd played by the harness.  The
 * sandboxd answers every request mcpd sends it at once, the way the reply
 * mode says; the auditd checks every record mcpd sends it as mcp-auditd
 * would (record_decode()), and a record it would refuse is a finding.
 */
#ifndef MCPD_MCPDFUZZ_H
#define MCPD_MCPDFUZZ_H

#include <stddef.h>

#include <jansson.h>

struct event_base;

/* How the harness's sandboxd answers. */
enum sbx_mode {
	SBX_OK,			/* as a sandbox that works would */
	SBX_FAIL,		/* every request fails (SBX_E_*) */
	SBX_MALFORMED,		/* frames of the wrong size, bad entries */
	SBX_SILENT,		/* no answer until mcpd gives up or cancels */
	SBX_ODD,		/* works, with odd output: signals, timeouts,
				   bytes that are not UTF-8 */
	SBX_NMODES
};

/* Once per process: the policy, tools, the event base. */
void		 mcpdfuzz_init(void);
extern struct event_base *mcpdfuzz_base;

/* Each input from the same start: mcpd up, with its siblings. */
void		 mcpdfuzz_begin(void);
/* ... and down, every request, session and task gone. */
void		 mcpdfuzz_end(void);

void		 mcpdfuzz_mode(enum sbx_mode);
/* The loop runs, and sandboxd answers, until nothing is left to do. */
void		 mcpdfuzz_pump(void);

/* Every message mcpd writes must be JSON-RPC: one compact line of JSON. */
void		 mcpdfuzz_check_json(json_t *);

#endif
