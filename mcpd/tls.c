/*
 * TLS for the listeners mcpd.conf marks "tls": OpenSSL, through
 * libevent's bufferevent_openssl (http.c), with one server context made
 * from the files "tls certificate" (the chain, leaf first) and "tls key"
 * name.  They are read as root before mcpd becomes its own user, and
 * again on SIGHUP as that user, where Landlock lets it read those two
 * files and nothing else of theirs: a renewal takes effect without a
 * restart, and a file that cannot be read, or does not make a working
 * context with the other, leaves the old context serving.  Connections
 * keep the context they started with.
 *
 * TLS 1.2 and 1.3 only; under 1.2 only ECDHE key exchange with AEAD
 * ciphers; no renegotiation, no compression.  ALPN selects http/1.1, the
 * only protocol mcpd speaks; a client that offers ALPN without it is
 * refused with no_application_protocol (RFC 7301).
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "log.h"
#include "mcpd.h"
#include "policy.h"
#include "util.h"

#define TLS_CIPHERS12	"ECDHE+AESGCM:ECDHE+CHACHA20"
#define TLS_ALPN	"\x08http/1.1"

static SSL_CTX	*tls_ctx;

int
tls_wanted(const struct policy *conf)
{
	const struct listen_addr	*la;

	TAILQ_FOREACH(la, &conf->listens, entry)
		if (la->tls)
			return 1;
	return 0;
}

static int
tls_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char	*sel;

	if (SSL_select_next_proto(&sel, outlen,
	    (const unsigned char *)TLS_ALPN, sizeof(TLS_ALPN) - 1, in,
	    inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* OpenSSL's reason for the last failure, after what failed. */
static void
tls_error(char *err, size_t len, const char *what)
{
	unsigned long	 e = ERR_peek_last_error();
	char		 reason[256];

	if (e == 0)
		(void)str_copy(reason, "unknown error", sizeof(reason));
	else
		ERR_error_string_n(e, reason, sizeof(reason));
	(void)str_fmt(err, len, "%s: %s", what, reason);
	ERR_clear_error();
}

/* A key with a passphrase is refused: nobody is there to type it. */
static int
tls_no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	return -1;
}

/* A file must open: the errno says why not more plainly than OpenSSL. */
static int
tls_readable(const char *what, const char *path, char *err, size_t len)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		(void)str_fmt(err, len, "tls %s %s: %s", what, path,
		    strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static SSL_CTX *
tls_context_new(const char *cert, const char *key, char *err, size_t len)
{
	SSL_CTX		*ctx;
	BIO		*bio;
	EVP_PKEY	*pkey;
	char		 what[PATH_MAX + 32];

	ERR_clear_error();
	if (tls_readable("certificate", cert, err, len) == -1 ||
	    tls_readable("key", key, err, len) == -1)
		return NULL;
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		tls_error(err, len, "SSL_CTX_new");
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, TLS_CIPHERS12) != 1) {
		tls_error(err, len, "TLS settings");
		goto fail;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_alpn_select_cb(ctx, tls_alpn, NULL);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		(void)str_fmt(what, sizeof(what), "tls certificate %s", cert);
		tls_error(err, len, what);
		goto fail;
	}
	(void)str_fmt(what, sizeof(what), "tls key %s", key);
	pkey = NULL;
	if ((bio = BIO_new_file(key, "r")) != NULL)
		pkey = PEM_read_bio_PrivateKey(bio, NULL, tls_no_passphrase,
		    NULL);
	BIO_free(bio);
	if (pkey == NULL) {
		tls_error(err, len, what);
		goto fail;
	}
	/* Checked here: OpenSSL would drop a mismatched key in silence. */
	if (X509_check_private_key(SSL_CTX_get0_certificate(ctx),
	    pkey) != 1) {
		ERR_clear_error();
		(void)str_fmt(err, len, "tls key %s: it is not the key of tls "
		    "certificate %s", key, cert);
		EVP_PKEY_free(pkey);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey(ctx, pkey) != 1) {
		tls_error(err, len, what);
		EVP_PKEY_free(pkey);
		goto fail;
	}
	EVP_PKEY_free(pkey);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

/*
 * The context of the configuration's files, in place of the one before;
 * -1 with the reason in err, the old one kept, if they do not make one.
 */
int
tls_load(const struct policy *conf, char *err, size_t len)
{
	SSL_CTX	*ctx;

	if ((ctx = tls_context_new(conf->tls_cert, conf->tls_key, err,
	    len)) == NULL)
		return -1;
	/* Each connection's SSL holds a reference of its own. */
	SSL_CTX_free(tls_ctx);
	tls_ctx = ctx;
	return 0;
}

/* mcpd -n: do the files make a context? */
int
tls_check(const struct policy *conf, char *err, size_t len)
{
	SSL_CTX	*ctx;

	if (!tls_wanted(conf))
		return 0;
	if ((ctx = tls_context_new(conf->tls_cert, conf->tls_key, err,
	    len)) == NULL)
		return -1;
	SSL_CTX_free(ctx);
	return 0;
}

struct ssl_ctx_st *
tls_context(void)
{
	return tls_ctx;
}

void
tls_free(void)
{
	SSL_CTX_free(tls_ctx);
	tls_ctx = NULL;
}
