/*
 * Media types by file name: what mcpd tells clients a file is, and which
 * files sandboxd reads back as a run's pictures.
 */
#include <string.h>
#include <strings.h>

#include "mime.h"
#include "util.h"

const char *
mime_guess(const char *path)
{
	static const struct {
		const char	*ext;
		const char	*type;
	} types[] = {
		{ "png", "image/png" }, { "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" }, { "gif", "image/gif" },
		{ "svg", "image/svg+xml" }, { "webp", "image/webp" },
		{ "txt", "text/plain" }, { "log", "text/plain" },
		{ "md", "text/markdown" }, { "csv", "text/csv" },
		{ "html", "text/html" }, { "htm", "text/html" },
		{ "css", "text/css" }, { "js", "text/javascript" },
		{ "mjs", "text/javascript" }, { "json", "application/json" },
		{ "xml", "application/xml" }, { "yaml", "application/yaml" },
		{ "yml", "application/yaml" }, { "py", "text/x-python" },
		{ "c", "text/x-c" }, { "h", "text/x-c" },
		{ "sh", "text/x-shellscript" }, { "pdf", "application/pdf" },
		{ "zip", "application/zip" }, { "gz", "application/gzip" },
		{ "tar", "application/x-tar" }, { "wav", "audio/wav" },
		{ "mp3", "audio/mpeg" },
	};
	const char	*dot, *slash;
	size_t		 i;

	dot = strrchr(path, '.');
	slash = strrchr(path, '/');
	if (dot == NULL || (slash != NULL && dot < slash))
		return NULL;
	for (i = 0; i < nitems(types); i++)
		if (strcasecmp(dot + 1, types[i].ext) == 0)
			return types[i].type;
	return NULL;
}

int
mime_is_image(const char *mime)
{
	return mime != NULL && (strcmp(mime, "image/png") == 0 ||
	    strcmp(mime, "image/jpeg") == 0 || strcmp(mime, "image/gif") ==
	    0 || strcmp(mime, "image/svg+xml") == 0 ||
	    strcmp(mime, "image/webp") == 0);
}
