/*
 * Media types by file name.
 */
#ifndef MCPD_MIME_H
#define MCPD_MIME_H

/* A MIME type for a path, by its extension; NULL when unknown. */
const char	*mime_guess(const char *);
/* A picture a client can be shown: PNG, JPEG, GIF, SVG or WebP. */
int		 mime_is_image(const char *);

#endif
