/*
 * WebSocket framing, the server's side: see ws.h.
 *
 * A frame's header is checked part by part as it comes in (the first two
 * bytes, the extended length, the mask), so that a frame that must fail
 * the connection fails before a byte of its payload is read, and a
 * message that would pass max_message fails on its length alone, before
 * anything of it is kept.  Payload is unmasked as it arrives, into the
 * message being reassembled or, for a control frame, into ctl.  The
 * message buffer grows with what arrives, never with what a header
 * claims.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "util.h"
#include "ws.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_KEY_LEN	24		/* the base64 of 16 bytes */
#define WS_SHA1_LEN	20
#define WS_MSG_MIN	256		/* a message buffer's first size */
#define WS_MSG_KEEP	4096		/* kept from one message to the next */

#define B0_FIN		0x80
#define B0_RSV		0x70
#define B0_OP		0x0f
#define B1_MASK		0x80
#define B1_LEN		0x7f
#define OP_CONTROL	0x08

enum {
	WS_S_HEAD,
	WS_S_PAYLOAD,
	WS_S_FAILED,
	WS_S_CLOSED,
};

/* The parts of a header, each checked once it is in. */
enum {
	HDR_START,		/* FIN, RSV, opcode, MASK, 7-bit length */
	HDR_LENGTH,		/* 0, 2 or 8 bytes of extended length */
	HDR_MASK,		/* the masking key */
};

static void
ws_header_reset(struct ws_parser *p)
{
	p->state = WS_S_HEAD;
	p->hdrlen = 0;
	p->hdrneed = 2;
	p->hdrpart = HDR_START;
}

void
ws_parser_init(struct ws_parser *p, size_t max_message)
{
	memset(p, 0, sizeof(*p));
	p->max_message = max_message;
	ws_header_reset(p);
}

static void
ws_msg_free(struct ws_parser *p)
{
	free(p->msg);
	p->msg = NULL;
	p->msglen = p->msgcap = 0;
}

void
ws_parser_free(struct ws_parser *p)
{
	ws_msg_free(p);
}

/* Nothing more is read: what was reassembled is of no use. */
static enum ws_event
ws_fail(struct ws_parser *p, uint16_t code, const char *why)
{
	p->state = WS_S_FAILED;
	p->close_code = code;
	p->why = why;
	ws_msg_free(p);
	return WS_FAIL;
}

/* The first two bytes: all but the length's encoding can be judged. */
static enum ws_event
ws_check_start(struct ws_parser *p)
{
	uint8_t	 len7 = p->hdr[1] & B1_LEN;

	p->fin = (p->hdr[0] & B0_FIN) != 0;
	p->op = p->hdr[0] & B0_OP;
	if (p->hdr[0] & B0_RSV)
		return ws_fail(p, WS_CLOSE_PROTOCOL, "reserved bits set");
	if (!(p->hdr[1] & B1_MASK))
		return ws_fail(p, WS_CLOSE_PROTOCOL, "unmasked frame");
	switch (p->op) {
	case WS_OP_CLOSE:
	case WS_OP_PING:
	case WS_OP_PONG:
		if (!p->fin)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "fragmented control frame");
		if (len7 > WS_CONTROL_MAX)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "control frame too long");
		break;
	case WS_OP_CONT:
		if (!p->in_msg)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "continuation with no message begun");
		break;
	case WS_OP_TEXT:
	case WS_OP_BINARY:
		if (p->in_msg)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "new message inside a fragmented one");
		if (p->op == WS_OP_BINARY)
			return ws_fail(p, WS_CLOSE_UNSUPPORTED,
			    "binary message");
		break;
	default:
		return ws_fail(p, WS_CLOSE_PROTOCOL, "unknown opcode");
	}
	p->hdrneed += len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
	return WS_MORE;
}

/*
 * The payload's length.  Each length has one encoding, the shortest, so
 * that no two parsers can read a frame's extent two ways.
 */
static enum ws_event
ws_check_length(struct ws_parser *p)
{
	uint64_t	 len = p->hdr[1] & B1_LEN;
	size_t		 i;

	if (len == 126) {
		len = (uint64_t)p->hdr[2] << 8 | p->hdr[3];
		if (len < 126)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "16-bit length below 126");
	} else if (len == 127) {
		for (len = 0, i = 2; i < 10; i++)
			len = len << 8 | p->hdr[i];
		if (len >> 63)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "64-bit length with the top bit set");
		if (len <= 0xffff)
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "64-bit length below 65536");
	}
	if (!(p->op & OP_CONTROL) && (p->msglen > p->max_message ||
	    len > p->max_message - p->msglen))
		return ws_fail(p, WS_CLOSE_TOO_BIG, "message too big");
	p->left = len;
	p->hdrneed += 4;
	return WS_MORE;
}

/* Header bytes, each part checked once it is in; WS_MORE or WS_FAIL. */
static enum ws_event
ws_header(struct ws_parser *p, const uint8_t *buf, size_t len, size_t *used)
{
	enum ws_event	 ev = WS_MORE;

	while (ev == WS_MORE && p->state == WS_S_HEAD) {
		if (p->hdrlen < p->hdrneed) {
			if (*used == len)
				break;
			p->hdr[p->hdrlen++] = buf[(*used)++];
			continue;
		}
		switch (p->hdrpart++) {
		case HDR_START:
			ev = ws_check_start(p);
			break;
		case HDR_LENGTH:
			ev = ws_check_length(p);
			break;
		default:
			p->state = WS_S_PAYLOAD;
			p->pos = 0;
			break;
		}
	}
	return ev;
}

/* Room for n more bytes of message and its NUL. */
static void
ws_msg_room(struct ws_parser *p, size_t n)
{
	size_t	 need = p->msglen + n + 1, cap;

	if (p->msg != NULL && need <= p->msgcap)
		return;
	cap = p->msgcap >= WS_MSG_MIN / 2 ? p->msgcap * 2 : WS_MSG_MIN;
	if (cap > p->max_message)
		cap = p->max_message + 1;
	if (cap < need)
		cap = need;
	p->msg = xreallocarray(p->msg, cap, 1);
	p->msgcap = cap;
}

/* The caller is done with the last message: start the next. */
static void
ws_msg_next(struct ws_parser *p)
{
	p->handed = 0;
	p->msglen = 0;
	if (p->msgcap > WS_MSG_KEEP)
		ws_msg_free(p);
}

/* What of the frame's payload buf holds, unmasked into its place. */
static void
ws_payload(struct ws_parser *p, const uint8_t *buf, size_t len, size_t *used)
{
	const uint8_t	*mask = p->hdr + p->hdrlen - 4;
	uint8_t		*dst;
	size_t		 n = len - *used, i;

	if (n > p->left)
		n = (size_t)p->left;
	if (p->op & OP_CONTROL)
		dst = p->ctl + p->pos;
	else {
		ws_msg_room(p, n);
		dst = p->msg + p->msglen;
		p->msglen += n;
	}
	for (i = 0; i < n; i++, p->pos++)
		dst[i] = buf[*used + i] ^ mask[p->pos & 3];
	*used += n;
	p->left -= n;
}

/* Codes a peer may send (RFC 6455 7.4.1, and the IANA registry). */
static int
ws_close_code_valid(uint16_t code)
{
	return (code >= 1000 && code <= 1003) ||
	    (code >= 1007 && code <= 1014) ||
	    (code >= 3000 && code <= 4999);
}

static enum ws_event
ws_close(struct ws_parser *p)
{
	size_t	 n = p->ctllen;

	if (n == 1)
		return ws_fail(p, WS_CLOSE_PROTOCOL, "close payload of 1 byte");
	p->close_code = WS_CLOSE_NONE;
	if (n >= 2) {
		p->close_code = (uint16_t)(p->ctl[0] << 8 | p->ctl[1]);
		if (!ws_close_code_valid(p->close_code))
			return ws_fail(p, WS_CLOSE_PROTOCOL,
			    "close code not allowed");
		if (!utf8_valid(p->ctl + 2, n - 2))
			return ws_fail(p, WS_CLOSE_BAD_DATA,
			    "close reason not UTF-8");
		memcpy(p->close_reason, p->ctl + 2, n - 2);
		p->close_reason[n - 2] = '\0';
	} else
		p->close_reason[0] = '\0';
	p->state = WS_S_CLOSED;
	ws_msg_free(p);
	return WS_CLOSE;
}

/* A frame's payload is all in: its event, or WS_MORE for a fragment. */
static enum ws_event
ws_frame_end(struct ws_parser *p)
{
	ws_header_reset(p);
	if (p->op & OP_CONTROL) {
		p->ctllen = p->pos;
		p->ctl[p->ctllen] = '\0';
		if (p->op == WS_OP_CLOSE)
			return ws_close(p);
		return p->op == WS_OP_PING ? WS_PING : WS_PONG;
	}
	if (!p->fin) {
		p->in_msg = 1;
		return WS_MORE;
	}
	p->in_msg = 0;
	ws_msg_room(p, 0);
	p->msg[p->msglen] = '\0';
	if (!utf8_valid(p->msg, p->msglen))
		return ws_fail(p, WS_CLOSE_BAD_DATA, "text not UTF-8");
	p->handed = 1;
	return WS_TEXT;
}

enum ws_event
ws_parse(struct ws_parser *p, const uint8_t *buf, size_t len, size_t *used)
{
	enum ws_event	 ev = WS_MORE;

	*used = 0;
	if (p->state == WS_S_FAILED)
		return WS_FAIL;
	if (p->state == WS_S_CLOSED)
		return WS_CLOSE;
	if (p->handed)
		ws_msg_next(p);
	while (ev == WS_MORE) {
		if (p->state == WS_S_HEAD) {
			ev = ws_header(p, buf, len, used);
			if (p->state == WS_S_HEAD)
				break;		/* all used */
		} else {
			ws_payload(p, buf, len, used);
			if (p->left > 0)
				break;		/* all used */
			ev = ws_frame_end(p);
		}
	}
	return ev;
}

size_t
ws_frame_header(uint8_t hdr[10], enum ws_opcode op, uint64_t len)
{
	size_t	 n, i;

	hdr[0] = B0_FIN | (uint8_t)op;
	if (len < 126) {
		hdr[1] = (uint8_t)len;
		return 2;
	}
	if (len <= 0xffff) {
		hdr[1] = 126;
		n = 2;
	} else {
		hdr[1] = 127;
		n = 8;
	}
	for (i = 0; i < n; i++)
		hdr[2 + i] = (uint8_t)(len >> (8 * (n - 1 - i)));
	return 2 + n;
}

size_t
ws_close_payload(uint8_t out[WS_CONTROL_MAX], uint16_t code,
    const char *reason)
{
	size_t	 n = 0;

	out[0] = (uint8_t)(code >> 8);
	out[1] = (uint8_t)code;
	if (reason == NULL)
		return 2;
	if ((n = strnlen(reason, WS_REASON_MAX + 1)) > WS_REASON_MAX) {
		/* Cut before the character the limit falls in, not inside. */
		n = WS_REASON_MAX;
		while (n > 0 && ((uint8_t)reason[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out + 2, reason, n);
	return 2 + n;
}

static int
b64_digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * The base64 of 16 bytes as an encoder writes it: 22 digits, the last
 * with its 4 unused bits clear, and "==".  A lenient decoder would take
 * other spellings of the same nonce; we take none.
 */
static int
ws_key_valid(const char *key)
{
	int	 i, d = 0;

	if (key == NULL || strnlen(key, WS_KEY_LEN + 1) != WS_KEY_LEN ||
	    key[22] != '=' || key[23] != '=')
		return 0;
	for (i = 0; i < 22; i++)
		if ((d = b64_digit(key[i])) == -1)
			return 0;
	return (d & 0x0f) == 0;
}

int
ws_accept_key(const char *key, char out[29])
{
	char		 buf[WS_KEY_LEN + sizeof(WS_GUID) - 1];
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen;

	out[0] = '\0';
	if (!ws_key_valid(key))
		return -1;
	memcpy(buf, key, WS_KEY_LEN);
	memcpy(buf + WS_KEY_LEN, WS_GUID, sizeof(WS_GUID) - 1);
	if (EVP_Digest(buf, sizeof(buf), md, &mdlen, EVP_sha1(), NULL) != 1 ||
	    mdlen != WS_SHA1_LEN)
		return -1;
	EVP_EncodeBlock((unsigned char *)out, md, WS_SHA1_LEN);
	return 0;
}
