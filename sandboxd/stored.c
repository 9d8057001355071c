/*
 * The images of the store, built or imported by mcpctl(8), served beside
 * the configuration's.  sandboxd reads the store at start and again when a
 * client lists images or names one it does not know, so an image is
 * usable as soon as mcpctl has put it in place; nothing here ever writes
 * to the store.  A name the configuration defines is the configuration's.
 *
 * A stored image keeps its place in the list once removed from the store,
 * marked gone: containers running from it go on, and pools and probes keep
 * their names, but no new sandbox or run may start from it.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "imgstore.h"
#include "log.h"
#include "sandboxd.h"
#include "util.h"

static void
stored_set(struct image *im, const struct imgstore_image *si)
{
	if (strcmp(im->digest, si->digest) != 0 && im->digest[0] != '\0')
		log_info("image %s: now %s", im->name, si->digest);
	im->type = IMAGE_ROOTFS;
	im->stored = 1;
	im->gone = 0;
	str_copy(im->path, si->rootfs, sizeof(im->path));
	str_copy(im->digest, si->digest, sizeof(im->digest));
	str_copy(im->source, si->source, sizeof(im->source));
	im->created = si->created;
	im->size = si->size;
}

static void
stored_gone(struct image *im)
{
	if (im->digest[0] != '\0')
		log_info("image %s: removed from the store", im->name);
	im->gone = 1;
	im->digest[0] = '\0';
}

void
stored_refresh(void)
{
	struct imgstore_image	*list;
	struct image		*im;
	char			 err[256];
	size_t			 n, i;

	if (imgstore_list(sbd->conf->state_dir, &list, &n, err,
	    sizeof(err)) == -1) {
		log_warnx("the image store: %s", err);
		return;
	}
	/* Gone unless the store still names it. */
	TAILQ_FOREACH(im, &sbd->conf->images, entry)
		if (im->stored)
			im->gone = 1;
	for (i = 0; i < n; i++) {
		if ((im = policy_image(sbd->conf, list[i].name)) == NULL) {
			im = xcalloc(1, sizeof(*im));
			str_copy(im->name, list[i].name, sizeof(im->name));
			im->pool = 0;
			im->pool_idle = DEFAULT_POOL_IDLE;
			TAILQ_INSERT_TAIL(&sbd->conf->images, im, entry);
			log_info("image %s: %s, from the store", im->name,
			    list[i].digest);
		} else if (!im->stored)
			continue;
		stored_set(im, &list[i]);
	}
	TAILQ_FOREACH(im, &sbd->conf->images, entry)
		if (im->stored && im->gone)
			stored_gone(im);
	free(list);
}

/* A stored image's name, looked up again: followed, or marked gone. */
static void
stored_recheck(struct image *im)
{
	struct imgstore_image	 si;
	char			 err[256];

	switch (imgstore_lookup(sbd->conf->state_dir, im->name, &si, err,
	    sizeof(err))) {
	case 0:
		stored_set(im, &si);
		break;
	case 1:
		stored_gone(im);
		break;
	default:
		log_warnx("the image store: %s", err);
		break;
	}
}

/*
 * An image a new sandbox or run may start from, or NULL.  A stored one's
 * name is read again, so that a name mcpctl removed or gave to another
 * tree a moment ago is refused, or followed; a name not known yet makes
 * the whole store be read.
 */
struct image *
stored_usable(const char *name)
{
	struct image	*im;

	if ((im = policy_image(sbd->conf, name)) == NULL) {
		stored_refresh();
		im = policy_image(sbd->conf, name);
	} else if (im->stored)
		stored_recheck(im);
	return im != NULL && !im->gone ? im : NULL;
}
