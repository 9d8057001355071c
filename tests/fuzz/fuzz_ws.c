/*
 * Fuzz target: mcpd's WebSocket framing (mcpd/ws.c), from a client's raw
 * bytes: frame headers and their lengths, masks, fragments with control
 * frames between them, close payloads, UTF-8, max_message.
 *
 * Input: four bytes of piece sizes, then the bytes the client sends.
 * They go to one parser in pieces of those sizes in turn (0: all that is
 * left), each piece in a buffer of its own size so that a read past it
 * is caught, and to another parser all at once.  Every event is followed
 * as a transport would, until WS_MORE with all used, or WS_FAIL or
 * WS_CLOSE.  Both parsers must see the same events and use the same
 * bytes.  And: no call uses more than it was given, WS_MORE uses all of
 * it, any other event at least a byte; a text message is valid UTF-8, NUL
 * ended, within max_message; a close carries a code a peer may send and
 * a UTF-8 reason; a failure, a code we send and a phrase; after WS_FAIL
 * or WS_CLOSE the parser says it again and uses nothing.
 *
 * The same bytes, up to a NUL, are also the reason of a close we send:
 * ws_close_payload() keeps a prefix of it, all of it if it fits, and of
 * valid UTF-8 it keeps valid UTF-8, short of the limit by less than a
 * character.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../mcpd/ws.h"

#define MAX_MESSAGE	((size_t)64 * 1024)
#define NSIZES		4

/* What a parser made of the bytes. */
struct trace {
	uint64_t	 hash;		/* of the events and their payloads */
	size_t		 used;
	enum ws_event	 last;
};

static void
mix(struct trace *t, const void *p, size_t len)
{
	const uint8_t	*s = p;

	while (len-- > 0)
		t->hash = (t->hash ^ *s++) * 0x100000001b3ULL;
}

static int
peer_code(uint16_t code)
{
	return code == WS_CLOSE_NONE || (code >= 1000 && code <= 1003) ||
	    (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

static int
fail_code(uint16_t code)
{
	return code == WS_CLOSE_PROTOCOL || code == WS_CLOSE_UNSUPPORTED ||
	    code == WS_CLOSE_BAD_DATA || code == WS_CLOSE_TOO_BIG;
}

static void
check_event(const struct ws_parser *p, enum ws_event ev, struct trace *t)
{
	size_t	 n;

	switch (ev) {
	case WS_MORE:
		return;
	case WS_TEXT:
		if (p->msglen > MAX_MESSAGE || p->msg[p->msglen] != '\0' ||
		    !utf8_valid(p->msg, p->msglen))
			abort();
		mix(t, p->msg, p->msglen);
		break;
	case WS_PING:
	case WS_PONG:
		if (p->ctllen > WS_CONTROL_MAX || p->ctl[p->ctllen] != '\0')
			abort();
		mix(t, p->ctl, p->ctllen);
		break;
	case WS_CLOSE:
		n = strnlen(p->close_reason, sizeof(p->close_reason));
		if (!peer_code(p->close_code) || n > WS_REASON_MAX ||
		    !utf8_valid((const uint8_t *)p->close_reason, n))
			abort();
		mix(t, &p->close_code, sizeof(p->close_code));
		mix(t, p->close_reason, n);
		break;
	case WS_FAIL:
		if (!fail_code(p->close_code) || p->why == NULL)
			abort();
		mix(t, &p->close_code, sizeof(p->close_code));
		break;
	}
	mix(t, &ev, sizeof(ev));
}

/* One piece, its events followed: WS_MORE, or the parser's end. */
static enum ws_event
piece(struct ws_parser *p, const uint8_t *data, size_t len, struct trace *t)
{
	enum ws_event	 ev, again;
	uint8_t		*buf;
	size_t		 off = 0, used;

	if ((buf = malloc(len == 0 ? 1 : len)) == NULL)
		abort();
	memcpy(buf, data, len);
	do {
		ev = ws_parse(p, buf + off, len - off, &used);
		if (used > len - off || (ev == WS_MORE && used != len - off) ||
		    (ev != WS_MORE && ev != WS_FAIL && ev != WS_CLOSE &&
		    used == 0))
			abort();
		off += used;
		check_event(p, ev, t);
	} while (ev != WS_MORE && ev != WS_FAIL && ev != WS_CLOSE);
	if (ev != WS_MORE) {
		again = ws_parse(p, buf + off, len - off, &used);
		if (again != ev || used != 0)
			abort();
	}
	free(buf);
	t->used += off;
	t->last = ev;
	return ev;
}

static void
close_reason(const uint8_t *data, size_t size)
{
	uint8_t	 out[WS_CONTROL_MAX];
	char	 reason[2 * WS_CONTROL_MAX];
	size_t	 n, len;

	len = size < sizeof(reason) - 1 ? size : sizeof(reason) - 1;
	memcpy(reason, data, len);
	reason[len] = '\0';
	len = strlen(reason);
	n = ws_close_payload(out, WS_CLOSE_NORMAL, reason) - 2;
	if (n > WS_REASON_MAX || memcmp(out + 2, reason, n) != 0 ||
	    (len <= WS_REASON_MAX && n != len))
		abort();
	if (utf8_valid((const uint8_t *)reason, len) &&
	    (!utf8_valid(out + 2, n) || (len > WS_REASON_MAX &&
	    n + 4 <= WS_REASON_MAX)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ws_parser	 p;
	struct trace		 whole, cut;
	struct fuzz_in		 in = { data, size };
	uint8_t			 sizes[NSIZES];
	size_t			 i, n, off;

	for (i = 0; i < NSIZES; i++)
		sizes[i] = fuzz_u8(&in);

	memset(&whole, 0, sizeof(whole));
	ws_parser_init(&p, MAX_MESSAGE);
	piece(&p, in.p, in.left, &whole);
	ws_parser_free(&p);

	memset(&cut, 0, sizeof(cut));
	ws_parser_init(&p, MAX_MESSAGE);
	for (off = 0, i = 0; off < in.left; off += n, i++) {
		n = sizes[i % NSIZES];
		if (n == 0 || n > in.left - off)
			n = in.left - off;
		if (piece(&p, in.p + off, n, &cut) != WS_MORE)
			break;
	}
	ws_parser_free(&p);

	if (whole.hash != cut.hash || whole.used != cut.used ||
	    whole.last != cut.last)
		abort();

	close_reason(in.p, in.left);
	return 0;
}
