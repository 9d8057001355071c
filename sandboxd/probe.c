/*
 * Which languages an image can run, and their versions.
 *
 * A language is present in an image when its tools are (policy_language_
 * tools(): the programs its version and run commands start) and its version
 * command succeeds.  Finding out means running programs of the image, so
 * it happens the only way sandboxd runs anything of an image: in a fresh
 * one-shot container, under the default limits and no network, recorded in
 * the audit log.  One container answers for every language of an image, at
 * the first IMAGES request that wants languages; the answer is kept until
 * sandboxd stops, or the image's digest changes.  A probe that failed is
 * tried again by the next request.
 *
 * What the container prints is the image's word, checked like any input:
 * only lines carrying this probe's nonce count, and a version is cut to
 * one printable line.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "job.h"
#include "log.h"
#include "util.h"

enum probe_state {
	PROBE_NONE,
	PROBE_RUNNING,
	PROBE_DONE,
	PROBE_FAILED,
};

struct probe_lang {
	const struct language	*lang;
	int			 present;
	char			 version[SBX_VERSION_MAX];
};

struct probe {
	TAILQ_ENTRY(probe)	 entry;
	char			 image[SBX_NAME_MAX];
	char			 digest[SBX_DIGEST_MAX];
	enum probe_state	 state;
	char			 nonce[17];
	char			 error[SBX_MSG_MAX];
	struct probe_lang	*langs;
	size_t			 nlangs;
};

static TAILQ_HEAD(, probe)	probes = TAILQ_HEAD_INITIALIZER(probes);
/* IMAGES jobs waiting for probes to end. */
static TAILQ_HEAD(, job)	waiting = TAILQ_HEAD_INITIALIZER(waiting);

static struct probe *
probe_find(const struct image *img)
{
	struct probe	*p;

	TAILQ_FOREACH(p, &probes, entry)
		if (strcmp(p->image, img->name) == 0)
			break;
	if (p != NULL && strcmp(p->digest, img->digest) != 0) {
		/* Another image under the name: start again. */
		if (p->state == PROBE_RUNNING)
			return p;
		free(p->langs);
		p->langs = NULL;
		p->nlangs = 0;
		p->state = PROBE_NONE;
		str_copy(p->digest, img->digest, sizeof(p->digest));
	}
	return p;
}

/* A word for sh, single-quoted. */
static void
probe_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s != '\0'; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/*
 * For each language, one line: "NONCE i +" or "NONCE i -", the version
 * command's first non-empty line after the +.
 */
static char *
probe_script(struct probe *p)
{
	FILE		*f;
	char		*script = NULL;
	char		 tools[2][POLICY_NAME_MAX];
	size_t		 i, j, nt, len;

	if ((f = open_memstream(&script, &len)) == NULL)
		fatal("open_memstream");
	fprintf(f, "n=%s\n"
	    "first() { while IFS= read -r l; do [ -n \"$l\" ] && break; "
	    "done; printf '%%s\\n' \"$l\"; }\n", p->nonce);
	for (i = 0; i < p->nlangs; i++) {
		fprintf(f, "if true");
		nt = policy_language_tools(p->langs[i].lang, tools, 2);
		for (j = 0; j < nt; j++) {
			fprintf(f, " && command -v ");
			probe_quote(f, tools[j]);
			fprintf(f, " >/dev/null 2>&1");
		}
		if (p->langs[i].lang->version == NULL)
			fprintf(f, "; then echo \"$n %zu +\"", i);
		else
			fprintf(f, " && v=$( (%s) 2>&1 </dev/null); then "
			    "printf '%%s\\n' \"$v\" | { printf '%%s' "
			    "\"$n %zu + \"; first; }", p->langs[i].lang->version,
			    i);
		fprintf(f, "; else echo \"$n %zu -\"; fi\n", i);
	}
	if (fclose(f) == EOF)
		fatal("probe script");
	return script;
}

/* One line of the probe's output, if it is one of ours. */
static void
probe_line(struct probe *p, const char *line)
{
	struct probe_lang	*pl;
	const char		*s;
	char			*end;
	unsigned long		 i;
	size_t			 n, k;

	n = strlen(p->nonce);
	if (strncmp(line, p->nonce, n) != 0 || line[n] != ' ')
		return;
	s = line + n + 1;
	i = strtoul(s, &end, 10);
	if (end == s || *end != ' ' || i >= p->nlangs)
		return;
	pl = &p->langs[i];
	if (end[1] != '+')
		return;
	pl->present = 1;
	s = end[2] == ' ' ? end + 3 : "";
	for (k = 0; k < sizeof(pl->version) - 1 && s[k] != '\0'; k++)
		pl->version[k] = isprint((unsigned char)s[k]) ? s[k] : '?';
	pl->version[k] = '\0';
	while (k > 0 && pl->version[k - 1] == ' ')
		pl->version[--k] = '\0';
}

static void
probe_parse(struct probe *p, const char *out, size_t len)
{
	char		 line[512];
	const char	*nl, *end = out + len;
	size_t		 n;

	while (out < end) {
		if ((nl = memchr(out, '\n', (size_t)(end - out))) == NULL)
			nl = end;
		n = (size_t)(nl - out);
		if (n < sizeof(line)) {
			memcpy(line, out, n);
			line[n] = '\0';
			probe_line(p, line);
		}
		out = nl + 1;
	}
}

/* Is any probe an IMAGES job waits for still running? */
static int
probe_pending(void)
{
	struct image	*img;
	struct probe	*p;

	TAILQ_FOREACH(img, &sbd->conf->images, entry)
		if ((p = probe_find(img)) != NULL &&
		    p->state == PROBE_RUNNING)
			return 1;
	return 0;
}

/* Answer every waiting job whose probes have all ended. */
static void
probe_wake(void)
{
	struct job	*job, *next;

	for (job = TAILQ_FIRST(&waiting); job != NULL; job = next) {
		next = TAILQ_NEXT(job, wait);
		if (probe_pending())
			continue;
		TAILQ_REMOVE(&waiting, job, wait);
		job_images_answer(job);
	}
}

static void
probe_done(struct job *job)
{
	struct probe	*p = job->done_arg;

	if (job->err_code != 0) {
		p->state = PROBE_FAILED;
		str_copy(p->error, job->error, sizeof(p->error));
	} else if (job->result.flags & SBX_R_EXEC_FAILED) {
		/* Every command is run by sh: nothing runs here. */
		p->state = PROBE_DONE;
		snprintf(p->error, sizeof(p->error), "the image has no "
		    "/bin/sh");
	} else if (job->result.exit_code != 0 || job->result.signal != 0 ||
	    job->result.flags != 0) {
		p->state = PROBE_FAILED;
		snprintf(p->error, sizeof(p->error), "the probe failed (exit "
		    "%d, signal %d, flags %#x)", job->result.exit_code,
		    job->result.signal, job->result.flags);
	} else {
		probe_parse(p, job->out != NULL ? job->out : "", job->outlen);
		p->state = PROBE_DONE;
	}
	if (p->error[0] != '\0')
		log_warnx("image %s: languages: %s", p->image, p->error);
	probe_wake();
}

static void
probe_start(struct probe *p)
{
	struct language	*l;
	uint8_t		 r[8];
	char		*script;
	size_t		 i = 0;

	free(p->langs);
	p->nlangs = 0;
	TAILQ_FOREACH(l, &sbd->conf->languages, entry)
		p->nlangs++;
	p->langs = xcalloc(p->nlangs + 1, sizeof(*p->langs));
	TAILQ_FOREACH(l, &sbd->conf->languages, entry)
		p->langs[i++].lang = l;
	randombytes_buf(r, sizeof(r));
	sodium_bin2hex(p->nonce, sizeof(p->nonce), r, sizeof(r));
	p->error[0] = '\0';
	p->state = PROBE_RUNNING;
	script = probe_script(p);
	job_own_run(p->image, script, probe_done, p);
	free(script);
}

void
probe_images(struct job *job)
{
	struct image	*img;
	struct probe	*p;

	stored_refresh();
	if (job->images_flags & SBX_IMAGES_LANGS) {
		TAILQ_FOREACH(img, &sbd->conf->images, entry) {
			if (img->gone)
				continue;
			if ((p = probe_find(img)) == NULL) {
				p = xcalloc(1, sizeof(*p));
				str_copy(p->image, img->name,
				    sizeof(p->image));
				str_copy(p->digest, img->digest,
				    sizeof(p->digest));
				TAILQ_INSERT_TAIL(&probes, p, entry);
			}
			if (p->state == PROBE_NONE ||
			    p->state == PROBE_FAILED)
				probe_start(p);
		}
		if (probe_pending()) {
			TAILQ_INSERT_TAIL(&waiting, job, wait);
			return;
		}
	}
	job_images_answer(job);
}

void
probe_answer(struct job *job, const struct image *img)
{
	struct sbx_image	 si;
	struct sbx_lang		 sl;
	const struct runtime	*rt;
	struct probe		*p;
	size_t			 i;

	memset(&si, 0, sizeof(si));
	str_copy(si.name, img->name, sizeof(si.name));
	str_copy(si.digest, img->digest, sizeof(si.digest));
	/* For the tenant that asks: its own choice may stand over the image's. */
	if ((rt = policy_runtime_for(sbd->conf, job->tenant, img->name)) != NULL)
		str_copy(si.runtime, rt->name, sizeof(si.runtime));
	str_copy(si.source, img->source, sizeof(si.source));
	si.created = img->created;
	si.size = img->size;
	si.type = img->type == IMAGE_HOST ? SBX_IMAGE_HOST :
	    img->stored ? SBX_IMAGE_STORED : SBX_IMAGE_ROOTFS;
	si.pool = img->pool;
	p = (job->images_flags & SBX_IMAGES_LANGS) ? probe_find(img) : NULL;
	if (p != NULL)
		str_copy(si.probe_error, p->error, sizeof(si.probe_error));
	job_send(job, IMSG_SBX_IMAGE, &si, sizeof(si));
	if (p == NULL || p->state != PROBE_DONE)
		return;
	for (i = 0; i < p->nlangs; i++) {
		if (!p->langs[i].present)
			continue;
		memset(&sl, 0, sizeof(sl));
		str_copy(sl.image, img->name, sizeof(sl.image));
		str_copy(sl.language, p->langs[i].lang->name,
		    sizeof(sl.language));
		str_copy(sl.version, p->langs[i].version, sizeof(sl.version));
		job_send(job, IMSG_SBX_LANG, &sl, sizeof(sl));
	}
}

int
probe_lacks(const struct image *img, const struct language *lang)
{
	struct probe	*p;
	size_t		 i;

	if ((p = probe_find(img)) == NULL || p->state != PROBE_DONE)
		return 0;
	for (i = 0; i < p->nlangs; i++)
		if (p->langs[i].lang == lang)
			return !p->langs[i].present;
	return 0;
}

void
probe_free_all(void)
{
	struct probe	*p;

	while ((p = TAILQ_FIRST(&probes)) != NULL) {
		TAILQ_REMOVE(&probes, p, entry);
		free(p->langs);
		free(p);
	}
}
