/*
 * WebSocket framing (mcpd/ws.c): client frames built here, masked with
 * random keys, parsed whole and in pieces down to a byte at a time, and
 * each way a client can break the protocol met with the close code the
 * RFC gives for it.  Then the server's side: frame headers, close
 * payloads, the handshake's accept key, and the UTF-8 check.
 *
 * The masks come from a seed printed first; WS_SEED=N repeats a run.
 */
#include <sys/types.h>
#include <sys/random.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mcpd/ws.h"
#include "../tap.h"

#define MAX_DEFAULT	(1 << 20)
#define BIG		100000

static uint8_t	 stream[4 * BIG];
static size_t	 slen;

/* How the events of a run read, one after the other. */
struct run {
	char		 log[4096];
	enum ws_event	 last;
	size_t		 used;
};

static uint8_t
rnd8(void)
{
	return (uint8_t)random();
}

static void
put(const void *p, size_t len)
{
	if (slen + len > sizeof(stream))
		abort();
	memcpy(stream + slen, p, len);
	slen += len;
}

static void
put8(uint8_t v)
{
	put(&v, 1);
}

/*
 * A frame with first byte b0: masked or not, its length in lenbytes of
 * extended length (0: the shortest encoding; 1: the 7 bits alone).
 */
static void
frame_as(uint8_t b0, int masked, int lenbytes, const void *payload,
    size_t len)
{
	const uint8_t	*s = payload;
	uint8_t		 mask[4];
	size_t		 i;
	int		 m = masked ? 0x80 : 0;

	if (lenbytes == 0)
		lenbytes = len < 126 ? 1 : len <= 0xffff ? 2 : 8;
	put8(b0);
	if (lenbytes == 1)
		put8((uint8_t)(m | len));
	else {
		put8((uint8_t)(m | (lenbytes == 2 ? 126 : 127)));
		for (i = lenbytes; i > 0; i--)
			put8((uint8_t)((uint64_t)len >> (8 * (i - 1))));
	}
	if (!masked) {
		put(payload, len);
		return;
	}
	for (i = 0; i < 4; i++)
		put8(mask[i] = rnd8());
	for (i = 0; i < len; i++)
		put8(s[i] ^ mask[i & 3]);
}

/* A client's frame, as it must be: masked, its length the shortest. */
static void
frame(uint8_t b0, const void *payload, size_t len)
{
	frame_as(b0, 1, 0, payload, len);
}

static void
frame_str(uint8_t b0, const char *s)
{
	frame(b0, s, strlen(s));
}

static void
frame_close(uint16_t code, const char *reason)
{
	uint8_t	 p[WS_CONTROL_MAX];
	size_t	 n = strlen(reason);

	p[0] = (uint8_t)(code >> 8);
	p[1] = (uint8_t)code;
	memcpy(p + 2, reason, n);
	frame(0x88, p, 2 + n);
}

static uint32_t
fnv(const uint8_t *p, size_t len)
{
	uint32_t	 h = 2166136261u;

	while (len-- > 0)
		h = (h ^ *p++) * 16777619u;
	return h;
}

__attribute__((__format__(printf, 2, 3)))
static void
appendf(struct run *r, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 off = strlen(r->log);

	va_start(ap, fmt);
	vsnprintf(r->log + off, sizeof(r->log) - off, fmt, ap);
	va_end(ap);
}

/* A payload as it is when short, by its length and hash when not. */
static void
note(struct run *r, const char *what, const uint8_t *p, size_t len)
{
	if (len <= 40)
		appendf(r, "%s(%.*s) ", what, (int)len, (const char *)p);
	else
		appendf(r, "%s(%zu,#%08x) ", what, len, fnv(p, len));
}

static void
log_event(struct run *r, struct ws_parser *p, enum ws_event ev)
{
	switch (ev) {
	case WS_MORE:
		break;
	case WS_TEXT:
		if (p->msg[p->msglen] != '\0' ||
		    !utf8_valid(p->msg, p->msglen))
			appendf(r, "!text ");
		else
			note(r, "text", p->msg, p->msglen);
		break;
	case WS_PING:
	case WS_PONG:
		note(r, ev == WS_PING ? "ping" : "pong", p->ctl, p->ctllen);
		break;
	case WS_CLOSE:
		appendf(r, "close(%u,%s) ", p->close_code, p->close_reason);
		break;
	case WS_FAIL:
		appendf(r, "fail(%u) ", p->close_code);
		if (p->why == NULL)
			appendf(r, "!why ");
		break;
	}
}

/*
 * The stream to a parser in pieces of step bytes (0: all at once), each
 * piece until it is used up or the parser has ended.
 */
static void
feed(struct ws_parser *p, const uint8_t *buf, size_t len, size_t step,
    struct run *r)
{
	enum ws_event	 ev = WS_MORE;
	size_t		 off = 0, end, used;

	memset(r, 0, sizeof(*r));
	do {
		end = step == 0 || len - off < step ? len : off + step;
		do {
			ev = ws_parse(p, buf + off, end - off, &used);
			if (used > end - off || (ev != WS_MORE &&
			    ev != WS_FAIL && ev != WS_CLOSE && used == 0))
				appendf(r, "!used ");
			off += used;
			log_event(r, p, ev);
		} while (ev != WS_MORE && ev != WS_FAIL && ev != WS_CLOSE);
		if (ev == WS_MORE && off != end)
			appendf(r, "!more ");
	} while (off < len && ev != WS_FAIL && ev != WS_CLOSE);
	r->last = ev;
	r->used = off;
}

static void
run(size_t max, size_t step, struct run *r)
{
	struct ws_parser	 p;

	ws_parser_init(&p, max);
	feed(&p, stream, slen, step, r);
	ws_parser_free(&p);
}

/* The stream's events, the same whatever pieces it comes in. */
static void
expect_max(size_t max, const char *want, const char *what)
{
	static const size_t	 steps[] = { 0, 1, 2, 3, 7, 64, 1000 };
	struct run		 r;
	size_t			 i;
	int			 same = 1;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]) && same; i++) {
		run(max, steps[i], &r);
		same = strcmp(r.log, want) == 0;
	}
	if (!ok(same, "%s", what))
		diag("in pieces of %zu: got \"%s\", want \"%s\"", steps[i - 1],
		    r.log, want);
}

static void
expect(const char *want, const char *what)
{
	expect_max(MAX_DEFAULT, want, what);
}

static void
test_messages(void)
{
	static const uint8_t	 hello[] = { 0x81, 0x85, 0x37, 0xfa, 0x21,
				    0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58 };
	static const uint8_t	 pong[] = { 0x8a, 0x85, 0x37, 0xfa, 0x21,
				    0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58 };
	static const uint8_t	 plain[] = { 0x81, 0x05, 0x48, 0x65, 0x6c,
				    0x6c, 0x6f };

	slen = 0;
	frame_str(0x81, "Hello, world");
	expect("text(Hello, world) ", "a single-frame text message");

	slen = 0;
	put(hello, sizeof(hello));
	expect("text(Hello) ", "RFC 6455 5.7: a masked \"Hello\"");

	slen = 0;
	put(plain, sizeof(plain));
	expect("fail(1002) ", "RFC 6455 5.7: an unmasked \"Hello\" is refused");

	slen = 0;
	frame_str(0x01, "Hel");
	frame_str(0x80, "lo");
	expect("text(Hello) ", "RFC 6455 5.7: fragmented \"Hello\"");

	slen = 0;
	put(pong, sizeof(pong));
	expect("pong(Hello) ", "RFC 6455 5.7: a masked pong");

	slen = 0;
	frame_str(0x01, "Hel");
	frame_str(0x89, "are you there");
	frame_str(0x00, "l");
	frame_str(0x8a, "");
	frame_str(0x80, "o");
	expect("ping(are you there) pong() text(Hello) ",
	    "fragmented text with control frames between the fragments");

	slen = 0;
	frame_str(0x81, "");
	frame_str(0x01, "");
	frame_str(0x80, "");
	frame_str(0x89, "");
	expect("text() text() ping() ", "empty messages and fragments");

	/* U+00E9 and U+1F600, each cut between two fragments. */
	slen = 0;
	frame_str(0x01, "caf\xc3");
	frame_str(0x00, "\xa9 \xf0\x9f");
	frame_str(0x80, "\x98\x80");
	expect("text(caf\xc3\xa9 \xf0\x9f\x98\x80) ",
	    "UTF-8 cut between fragments is checked whole");
}

static void
test_lengths(void)
{
	static uint8_t	 big[BIG];
	char		 want[128];
	size_t		 i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)('a' + i % 26);

	slen = 0;
	frame(0x81, big, 125);
	frame(0x81, big, 126);
	frame(0x81, big, 65535);
	frame(0x81, big, 65536);
	frame(0x81, big, BIG);
	snprintf(want, sizeof(want), "text(125,#%08x) text(126,#%08x) "
	    "text(65535,#%08x) text(65536,#%08x) text(%d,#%08x) ",
	    fnv(big, 125), fnv(big, 126), fnv(big, 65535), fnv(big, 65536),
	    BIG, fnv(big, BIG));
	expect(want, "7-bit, 16-bit and 64-bit lengths");
	ok(stream[1] == 0xfd && stream[2 + 4 + 125 + 1] == 0xfe &&
	    stream[slen - BIG - 4 - 9] == 0xff,
	    "the frames carry 125, 126 and 127 in their length byte");

	slen = 0;
	frame(0x81, big, 1000);
	snprintf(want, sizeof(want), "text(1000,#%08x) ", fnv(big, 1000));
	expect_max(1000, want, "a message of exactly max_message");

	slen = 0;
	frame(0x01, big, 600);
	frame(0x89, "x", 1);
	frame(0x80, big + 600, 400);
	snprintf(want, sizeof(want), "ping(x) text(1000,#%08x) ",
	    fnv(big, 1000));
	expect_max(1000, want, "fragments adding up to max_message");
}

/* The bytes used before the parser gave up, and what it said. */
static void
expect_used(size_t max, size_t used, const char *want, const char *what)
{
	struct run	 r;

	run(max, 0, &r);
	if (!ok(strcmp(r.log, want) == 0 && r.used == used, "%s", what))
		diag("got \"%s\" after %zu bytes, want \"%s\" after %zu",
		    r.log, r.used, want, used);
}

static void
test_too_big(void)
{
	static uint8_t	 big[2000];
	struct ws_parser p;
	size_t		 used;
	enum ws_event	 ev;

	memset(big, 'x', sizeof(big));
	slen = 0;
	frame(0x81, big, 1001);
	expect_max(1000, "fail(1009) ", "max_message + 1 fails: 1009");
	expect_used(1000, 4, "fail(1009) ",
	    "... from its header, before its mask or payload");

	slen = 0;
	frame(0x01, big, 600);
	frame(0x80, big, 401);
	expect_max(1000, "fail(1009) ",
	    "fragments adding up to max_message + 1 fail: 1009");
	expect_used(1000, 2 + 2 + 4 + 600 + 4, "fail(1009) ",
	    "... from the second fragment's header");

	slen = 0;
	frame_as(0x81, 1, 8, big, 0);
	memcpy(stream + 2, "\x7f\xff\xff\xff\xff\xff\xff\xff", 8);
	expect_used(1000, 10, "fail(1009) ",
	    "a 2^63 - 1 byte frame fails on its header");

	/* A header's claim allocates nothing: what arrives does. */
	slen = 0;
	frame(0x81, big, 1500);
	ws_parser_init(&p, 1 << 20);
	ev = ws_parse(&p, stream, 2 + 2 + 4 + 10, &used);
	ok(ev == WS_MORE && used == 18 && p.msglen == 10 && p.msgcap <= 256,
	    "the buffer holds what came (%zu of 1500 bytes), not the claim",
	    p.msgcap);
	ws_parser_free(&p);
}

/* A stream that must fail with code, each other way of feeding alike. */
static void
expect_fail(uint16_t code, const char *what)
{
	char	 want[32];

	snprintf(want, sizeof(want), "fail(%u) ", code);
	expect(want, what);
}

static void
test_framing_errors(void)
{
	static uint8_t	 pay[65536];
	char		 what[64], want[64];
	int		 op;

	memset(pay, 'a', sizeof(pay));

	slen = 0;
	frame_as(0x81, 0, 0, "hi", 2);
	expect_fail(1002, "an unmasked frame: 1002");

	slen = 0;
	frame_str(0xc1, "hi");
	expect_fail(1002, "RSV1 set: 1002");
	slen = 0;
	frame_str(0xa1, "hi");
	expect_fail(1002, "RSV2 set: 1002");
	slen = 0;
	frame_str(0x91, "hi");
	expect_fail(1002, "RSV3 set: 1002");

	for (op = 0x3; op <= 0xf; op++) {
		if (op >= 0x8 && op <= 0xa)
			continue;
		slen = 0;
		frame_str((uint8_t)(0x80 | op), "hi");
		snprintf(what, sizeof(what), "opcode 0x%x: 1002", op);
		expect_fail(1002, what);
	}

	slen = 0;
	frame(0x82, pay, 256);
	expect_fail(1003, "a binary message: 1003");
	expect_used(MAX_DEFAULT, 2, "fail(1003) ",
	    "... from its first two bytes, its payload unread");
	slen = 0;
	frame(0x02, pay, 10);
	frame(0x80, pay, 10);
	expect_used(MAX_DEFAULT, 2, "fail(1003) ",
	    "a fragmented binary message: 1003 from its first frame");

	slen = 0;
	frame_str(0x09, "hi");
	expect_fail(1002, "a ping without FIN: 1002");
	slen = 0;
	frame_str(0x08, "");
	expect_fail(1002, "a close without FIN: 1002");
	slen = 0;
	frame(0x89, pay, 125);
	frame(0x89, pay, 126);
	snprintf(want, sizeof(want), "ping(125,#%08x) fail(1002) ",
	    fnv(pay, 125));
	expect(want, "a ping of 125 bytes, then one of 126: 1002");
	slen = 0;
	frame(0x8a, pay, 300);
	expect_fail(1002, "a pong of 300 bytes: 1002");
	slen = 0;
	frame(0x88, pay, 126);
	expect_fail(1002, "a close of 126 bytes: 1002");

	slen = 0;
	frame_str(0x80, "lo");
	expect_fail(1002, "a continuation with no message begun: 1002");
	slen = 0;
	frame_str(0x81, "Hel");
	frame_str(0x80, "lo");
	expect("text(Hel) fail(1002) ",
	    "a continuation after a whole message: 1002");
	slen = 0;
	frame_str(0x01, "Hel");
	frame_str(0x81, "lo");
	expect_fail(1002, "a text frame inside a fragmented message: 1002");
	slen = 0;
	frame_str(0x01, "Hel");
	frame_str(0x82, "lo");
	expect_fail(1002, "a binary frame inside a fragmented message: 1002");

	slen = 0;
	frame_as(0x81, 1, 2, pay, 125);
	expect_fail(1002, "a 16-bit length of 125: 1002");
	slen = 0;
	frame_as(0x81, 1, 2, pay, 0);
	expect_fail(1002, "a 16-bit length of 0: 1002");
	slen = 0;
	frame_as(0x81, 1, 8, pay, 65535);
	expect_fail(1002, "a 64-bit length of 65535: 1002");
	slen = 0;
	frame_as(0x81, 1, 8, pay, 5);
	expect_fail(1002, "a 64-bit length of 5: 1002");
	slen = 0;
	frame_as(0x81, 1, 8, pay, 0);
	stream[2] = 0x80;
	expect_fail(1002, "a 64-bit length with its top bit set: 1002");
	slen = 0;
	frame_as(0x89, 1, 2, pay, 5);
	expect_fail(1002, "a ping with a 16-bit length: 1002");

	slen = 0;
	frame_str(0x81, "caf\xc3");
	expect_fail(1007, "text ending inside a character: 1007");
	slen = 0;
	frame_str(0x81, "\xc0\x80");
	expect_fail(1007, "text with an overlong NUL: 1007");
	slen = 0;
	frame_str(0x01, "ok so far");
	frame_str(0x80, "\xed\xa0\x80");
	expect_fail(1007, "a fragmented text with a surrogate: 1007");
}

static void
test_close(void)
{
	static const uint16_t	 bad[] = { 0, 999, 1004, 1005, 1006, 1015,
				    1016, 2000, 2999, 5000, 65535 };
	static const uint16_t	 good[] = { 1000, 1001, 1002, 1003, 1007,
				    1011, 1014, 3000, 4999 };
	char			 want[64], what[64];
	size_t			 i;
	int			 same;

	slen = 0;
	frame_close(1000, "bye");
	expect("close(1000,bye) ", "a close with a code and a reason");
	slen = 0;
	frame_str(0x88, "");
	expect("close(1005,) ", "a close with no payload: 1005");
	slen = 0;
	frame_close(1001, "");
	expect("close(1001,) ", "a close with a code alone");
	slen = 0;
	frame_close(1000, "d\xc3\xa9j\xc3\xa0 vu");
	expect("close(1000,d\xc3\xa9j\xc3\xa0 vu) ", "a UTF-8 reason");

	slen = 0;
	frame_str(0x88, "\x03");
	expect_fail(1002, "a close payload of 1 byte: 1002");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		slen = 0;
		frame_close(bad[i], "");
		snprintf(what, sizeof(what), "close code %u: 1002", bad[i]);
		expect_fail(1002, what);
	}
	for (same = 1, i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct run	 r;

		slen = 0;
		frame_close(good[i], "x");
		snprintf(want, sizeof(want), "close(%u,x) ", good[i]);
		run(MAX_DEFAULT, 0, &r);
		if (strcmp(r.log, want) != 0) {
			diag("code %u: got \"%s\"", good[i], r.log);
			same = 0;
		}
	}
	ok(same, "close codes a peer may send are taken");

	slen = 0;
	frame_close(1000, "\xff");
	expect_fail(1007, "a close reason that is not UTF-8: 1007");
	slen = 0;
	frame_close(1000, "\xe2\x82");
	expect_fail(1007, "a close reason cut inside a character: 1007");

	slen = 0;
	frame_str(0x01, "Hel");
	frame_close(1000, "bye");
	frame_str(0x80, "lo");
	expect("close(1000,bye) ",
	    "a close between fragments ends it; the rest is unread");
}

/* After WS_FAIL or WS_CLOSE the parser says it again and reads nothing. */
static void
test_after_end(void)
{
	struct ws_parser	 p;
	enum ws_event		 ev, again;
	size_t			 used, used2;

	slen = 0;
	frame_str(0x82, "x");
	frame_str(0x81, "after");
	ws_parser_init(&p, 100);
	ev = ws_parse(&p, stream, slen, &used);
	again = ws_parse(&p, stream + used, slen - used, &used2);
	ok(ev == WS_FAIL && again == WS_FAIL && used2 == 0 &&
	    p.close_code == 1003, "after WS_FAIL: WS_FAIL again, nothing read");
	ws_parser_free(&p);

	slen = 0;
	frame_close(1000, "");
	frame_str(0x81, "after");
	ws_parser_init(&p, 100);
	ev = ws_parse(&p, stream, slen, &used);
	again = ws_parse(&p, stream + used, slen - used, &used2);
	ok(ev == WS_CLOSE && again == WS_CLOSE && used2 == 0 &&
	    used == 2 + 4 + 2 && p.close_code == 1000,
	    "after WS_CLOSE: WS_CLOSE again, nothing read");
	ws_parser_free(&p);

	ws_parser_init(&p, 100);
	ev = ws_parse(&p, stream, 0, &used);
	ok(ev == WS_MORE && used == 0, "no bytes: WS_MORE");
	ws_parser_free(&p);
}

/* Whatever pieces a stream comes in, the same events. */
static void
test_pieces(void)
{
	static uint8_t	 pay[70000];
	const char	*prefix = "text(first) ping(ping) pong(pong) "
			    "text(fragmented) text(300,";
	struct run	 whole, r;
	size_t		 step;
	int		 same = 1;

	memset(pay, 'z', sizeof(pay));
	slen = 0;
	frame_str(0x81, "first");
	frame_str(0x89, "ping");
	frame_str(0x01, "frag");
	frame_str(0x8a, "pong");
	frame_str(0x00, "men");
	frame_str(0x80, "ted");
	frame(0x81, pay, 300);
	frame(0x81, pay, sizeof(pay));
	frame_str(0x81, "");
	frame_str(0x81, "\xe2\x82\xac");
	frame_close(1000, "done");
	run(MAX_DEFAULT, 0, &whole);
	for (step = 1; step <= 17 && same; step++) {
		run(MAX_DEFAULT, step, &r);
		same = strcmp(r.log, whole.log) == 0;
	}
	if (!ok(same, "byte at a time, and in pieces of 2 to 17 bytes, as "
	    "all at once"))
		diag("in pieces of %zu: \"%s\"; at once: \"%s\"", step - 1,
		    r.log, whole.log);
	ok(strncmp(whole.log, prefix, strlen(prefix)) == 0 &&
	    strstr(whole.log, " text() text(\xe2\x82\xac) close(1000,done) ")
	    != NULL, "... and those are the stream's events");
}

static void
test_frame_header(void)
{
	static const struct {
		uint64_t	 len;
		size_t		 n;
		const char	*hdr;
	} t[] = {
		{ 0, 2, "\x81\x00" },
		{ 125, 2, "\x81\x7d" },
		{ 126, 4, "\x81\x7e\x00\x7e" },
		{ 65535, 4, "\x81\x7e\xff\xff" },
		{ 65536, 10, "\x81\x7f\x00\x00\x00\x00\x00\x01\x00\x00" },
		{ 0x0102030405060708ULL, 10,
		    "\x81\x7f\x01\x02\x03\x04\x05\x06\x07\x08" },
	};
	uint8_t		 hdr[10];
	size_t		 i, n;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		n = ws_frame_header(hdr, WS_OP_TEXT, t[i].len);
		ok(n == t[i].n && memcmp(hdr, t[i].hdr, n) == 0,
		    "ws_frame_header: length %llu in %zu bytes",
		    (unsigned long long)t[i].len, t[i].n);
	}
	n = ws_frame_header(hdr, WS_OP_CLOSE, 2);
	ok(n == 2 && hdr[0] == 0x88 && hdr[1] == 0x02,
	    "ws_frame_header: a close, FIN set, unmasked");
	n = ws_frame_header(hdr, WS_OP_PONG, 0);
	ok(n == 2 && hdr[0] == 0x8a && hdr[1] == 0x00,
	    "ws_frame_header: a pong");
}

/* The close payload's reason comes back through the parser intact. */
static int
close_round_trip(const uint8_t *pay, size_t n)
{
	struct ws_parser	 p;
	enum ws_event		 ev;
	size_t			 used;
	int			 same;

	slen = 0;
	frame(0x88, pay, n);
	ws_parser_init(&p, 100);
	ev = ws_parse(&p, stream, slen, &used);
	same = ev == WS_CLOSE && p.close_code == (pay[0] << 8 | pay[1]) &&
	    strlen(p.close_reason) == n - 2 &&
	    memcmp(p.close_reason, pay + 2, n - 2) == 0;
	ws_parser_free(&p);
	return same;
}

static void
test_close_payload(void)
{
	uint8_t		 out[WS_CONTROL_MAX];
	char		 reason[256];
	size_t		 n;

	n = ws_close_payload(out, 1000, "bye");
	ok(n == 5 && memcmp(out, "\x03\xe8" "bye", 5) == 0,
	    "ws_close_payload: code then reason");
	n = ws_close_payload(out, 1009, NULL);
	ok(n == 2 && out[0] == 0x03 && out[1] == 0xf1,
	    "ws_close_payload: no reason");

	memset(reason, 'r', sizeof(reason));
	reason[123] = '\0';
	n = ws_close_payload(out, 1008, reason);
	ok(n == 125 && close_round_trip(out, n),
	    "ws_close_payload: a reason of 123 bytes fits whole");
	reason[123] = 'r';
	reason[200] = '\0';
	n = ws_close_payload(out, 1008, reason);
	ok(n == 125 && close_round_trip(out, n),
	    "ws_close_payload: a longer one is cut to 123 bytes");

	/* 122 bytes, then U+00E9 across the limit. */
	memcpy(reason + 122, "\xc3\xa9tail", 7);
	n = ws_close_payload(out, 1011, reason);
	ok(n == 2 + 122 && close_round_trip(out, n),
	    "ws_close_payload: a 2-byte character across the limit is left "
	    "out whole");
	/* 121 bytes, then U+00E9 just fitting. */
	memcpy(reason + 121, "\xc3\xa9tail", 7);
	n = ws_close_payload(out, 1011, reason);
	ok(n == 125 && memcmp(out + 123, "\xc3\xa9", 2) == 0 &&
	    close_round_trip(out, n),
	    "ws_close_payload: one that just fits is kept");
	/* 120 bytes, then U+1F600 (4 bytes) across it. */
	memset(reason, 'r', 200);
	memcpy(reason + 120, "\xf0\x9f\x98\x80tail", 9);
	n = ws_close_payload(out, 1011, reason);
	ok(n == 2 + 120 && close_round_trip(out, n),
	    "ws_close_payload: a 4-byte character across the limit is left "
	    "out whole");
}

static void
test_accept_key(void)
{
	static const char	*bad[] = {
		"",
		"dGhlIHNhbXBsZSBub25jZQ=",		/* 23 */
		"dGhlIHNhbXBsZSBub25jZQ== ",		/* 25 */
		" dGhlIHNhbXBsZSBub25jZQ==",
		"dGhlIHNhbXBsZSBub25jZQ",		/* no padding */
		"dGhlIHNhbXBsZSBub25jZQ=A",
		"dGhlIHNhbXBsZSBub25jZQA=",		/* 17 bytes */
		"dGhlIHNhbXBsZSBub25jZR==",		/* bits past 16 */
		"dGhlIHNhbXBsZSBub25jZ!==",
		"dGhlIHNhbXBsZSBub25jZ-==",		/* base64url */
		"dGhlIHNhbXBsZSBub25j\nQ==",
		"AAAAAAAAAAAAAAAAAAAAAAAA",		/* 18 bytes */
		"dGhlIHNhbXBsZSBub25jZQ==dGhlIHNhbXBsZSBub25jZQ==",
	};
	char			 out[29];
	size_t			 i;
	int			 refused = 1;

	ok(ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", out) == 0 &&
	    strcmp(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == 0,
	    "ws_accept_key: the RFC's example");
	ok(ws_accept_key("AAAAAAAAAAAAAAAAAAAAAA==", out) == 0 &&
	    strlen(out) == 28, "ws_accept_key: sixteen zero bytes");
	ok(ws_accept_key("/////////////////////w==", out) == 0,
	    "ws_accept_key: sixteen 0xff bytes");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ws_accept_key(bad[i], out) != -1 || out[0] != '\0') {
			diag("taken: \"%s\"", bad[i]);
			refused = 0;
		}
	ok(refused, "ws_accept_key: %zu keys that are not the base64 of 16 "
	    "bytes are refused", i);
	ok(ws_accept_key(NULL, out) == -1, "ws_accept_key: no key");
}

static void
test_utf8(void)
{
	static const struct {
		const char	*s;
		size_t		 len;
		int		 valid;
		const char	*what;
	} t[] = {
		{ "", 0, 1, "empty" },
		{ "plain ASCII", 11, 1, "ASCII" },
		{ "\x00", 1, 1, "NUL" },
		{ "\xc3\xa9", 2, 1, "U+00E9" },
		{ "\xe2\x82\xac", 3, 1, "U+20AC" },
		{ "\xed\x9f\xbf", 3, 1, "U+D7FF, before the surrogates" },
		{ "\xee\x80\x80", 3, 1, "U+E000, after them" },
		{ "\xf0\x90\x8d\x88", 4, 1, "U+10348" },
		{ "\xf4\x8f\xbf\xbf", 4, 1, "U+10FFFF" },
		{ "\xc0\x80", 2, 0, "overlong C0 80" },
		{ "\xc1\xbf", 2, 0, "overlong C1 BF" },
		{ "\xe0\x80\xaf", 3, 0, "overlong 3-byte /" },
		{ "\xf0\x80\x80\xaf", 4, 0, "overlong 4-byte /" },
		{ "\xed\xa0\x80", 3, 0, "surrogate ED A0 80" },
		{ "\xed\xbf\xbf", 3, 0, "surrogate ED BF BF" },
		{ "\xf4\x90\x80\x80", 4, 0, "U+110000, F4 90 80 80" },
		{ "\xf5\x80\x80\x80", 4, 0, "F5" },
		{ "\xff", 1, 0, "FF" },
		{ "\x80", 1, 0, "a lone continuation byte" },
		{ "\xc3", 1, 0, "truncated 2-byte" },
		{ "a\xe2\x82", 3, 0, "truncated 3-byte" },
		{ "\xf0\x90\x8d", 3, 0, "truncated 4-byte" },
		{ "\xc3\x28", 2, 0, "a lead byte before ASCII" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ok(utf8_valid((const uint8_t *)t[i].s, t[i].len) ==
		    t[i].valid, "utf8_valid: %s %s", t[i].what,
		    t[i].valid ? "taken" : "refused");
}

int
main(void)
{
	unsigned int	 seed;
	const char	*s;

	if ((s = getenv("WS_SEED")) != NULL)
		seed = (unsigned int)strtoul(s, NULL, 10);
	else if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = 1;
	diag("masks from WS_SEED=%u", seed);
	srandom(seed);

	test_messages();
	test_lengths();
	test_too_big();
	test_framing_errors();
	test_close();
	test_after_end();
	test_pieces();
	test_frame_header();
	test_close_payload();
	test_accept_key();
	test_utf8();
	return tap_done();
}
