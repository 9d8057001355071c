/*
 * The server side of WebSocket framing (RFC 6455), as pure functions over
 * byte buffers: the transport reads bytes, hands them to ws_parse(), and
 * acts on the events it returns.  No socket and no event loop here, so
 * that every byte a client sends can be fuzzed on its own.
 *
 * The parser is strict: MCP over WebSocket is text messages, so binary
 * ones, extensions, unmasked frames and length encodings a lenient peer
 * might read two ways fail the connection, each with the close code the
 * RFC gives for it.
 */
#ifndef MCPD_WS_H
#define MCPD_WS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define WS_CONTROL_MAX		125	/* a control frame's payload */
#define WS_REASON_MAX		(WS_CONTROL_MAX - 2)	/* after the code */

enum ws_opcode {
	WS_OP_CONT = 0x0,
	WS_OP_TEXT = 0x1,
	WS_OP_BINARY = 0x2,
	WS_OP_CLOSE = 0x8,
	WS_OP_PING = 0x9,
	WS_OP_PONG = 0xa,
};

/* Close codes we send (RFC 6455 7.4.1). */
#define WS_CLOSE_NORMAL		1000
#define WS_CLOSE_GOING_AWAY	1001
#define WS_CLOSE_PROTOCOL	1002
#define WS_CLOSE_UNSUPPORTED	1003	/* binary frames: MCP is text */
#define WS_CLOSE_NONE		1005	/* received: the peer sent no code */
#define WS_CLOSE_BAD_DATA	1007	/* text that is not UTF-8 */
#define WS_CLOSE_POLICY		1008
#define WS_CLOSE_TOO_BIG	1009
#define WS_CLOSE_ERROR		1011

enum ws_event {
	WS_MORE,	/* all of buf used, nothing complete: feed more */
	WS_TEXT,	/* a whole text message: msg, msglen */
	WS_PING,	/* ctl, ctllen: answer with a pong of that payload */
	WS_PONG,	/* ctl, ctllen */
	WS_CLOSE,	/* the peer's: close_code (1005: none), close_reason */
	WS_FAIL,	/* fail the connection: send close_code, read no more */
};

struct ws_parser {
	size_t		 max_message;	/* a whole message, reassembled */

	/* What the events hand over. */
	uint8_t		*msg;		/* valid UTF-8, NUL at msg[msglen] */
	size_t		 msglen;
	uint8_t		 ctl[WS_CONTROL_MAX + 1];	/* NUL-terminated */
	size_t		 ctllen;
	uint16_t	 close_code;	/* the peer's, or ours on WS_FAIL */
	char		 close_reason[WS_REASON_MAX + 1];	/* UTF-8 */
	const char	*why;		/* WS_FAIL: a short phrase for logs */

	/* Private. */
	int		 state;
	uint8_t		 hdr[14];	/* the frame header being read */
	size_t		 hdrlen;
	size_t		 hdrneed;
	int		 hdrpart;	/* the part of it being read */
	int		 fin;
	uint8_t		 op;
	uint64_t	 left;		/* payload bytes still to come */
	size_t		 pos;		/* payload bytes had, for the mask */
	int		 in_msg;	/* a fragmented message is unfinished */
	size_t		 msgcap;
	int		 handed;	/* msg went out with WS_TEXT */
};

void		 ws_parser_init(struct ws_parser *, size_t);
/* Frees the message buffer; the parser may be initialised again. */
void		 ws_parser_free(struct ws_parser *);
/*
 * Consume bytes: *used says how many.  After an event other than WS_MORE
 * call again with the rest.  msg stays valid until the next call.  After
 * WS_FAIL or WS_CLOSE every call returns that event again, using nothing.
 */
enum ws_event	 ws_parse(struct ws_parser *, const uint8_t *, size_t,
		    size_t *);

/* A server frame's header, FIN set, unmasked: its length, 2, 4 or 10. */
size_t		 ws_frame_header(uint8_t [10], enum ws_opcode, uint64_t);
/*
 * A close frame's payload: the code, then the reason (NULL: none) cut at
 * a UTF-8 boundary to fit.  Returns its length.
 */
size_t		 ws_close_payload(uint8_t [WS_CONTROL_MAX], uint16_t,
		    const char *);
/*
 * Sec-WebSocket-Accept for a Sec-WebSocket-Key, NUL-terminated in out:
 * 0, or -1 when the key is not the base64 of 16 bytes.
 */
int		 ws_accept_key(const char *, char [29]);

/* Strict UTF-8: no overlongs, surrogates or code points past U+10FFFF. */
int		 utf8_valid(const uint8_t *, size_t);	/* content.c */

#endif
