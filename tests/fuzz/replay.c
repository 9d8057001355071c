/*
 * A main() for a fuzz target without libFuzzer: every file named, and
 * every file in every directory named, through LLVMFuzzerTestOneInput()
 * once, in name order.  make check replays the committed corpus and the
 * regression inputs this way, with whatever compiler and sanitizers the
 * build uses; a crash or a sanitizer report is the test failing.
 *
 *	replay [-v] file|directory ...
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

/* Targets that need no set-up leave it out. */
extern int	LLVMFuzzerInitialize(int *, char ***) __attribute__((weak));

static int	 verbose;

static void
replay_file(const char *path)
{
	struct stat	 st;
	uint8_t		*buf;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1)
		err(2, "%s", path);
	/* One byte more than its size: libFuzzer never passes NULL. */
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		err(2, "%s", path);
	while (len < (size_t)st.st_size &&
	    (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	close(fd);
	/* Named before it runs: a crash's report follows the name. */
	if (verbose)
		fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
}

static int
replay_dir(const char *dir)
{
	struct dirent	**names;
	char		 path[PATH_MAX];
	int		 n, i, count = 0;

	if ((n = scandir(dir, &names, NULL, alphasort)) == -1)
		err(2, "%s", dir);
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir,
		    names[i]->d_name) < (int)sizeof(path)) {
			replay_file(path);
			count++;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

int
main(int argc, char *argv[])
{
	struct stat	 st;
	int		 i, n = 0;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		argv++;
		argc--;
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == -1)
			err(2, "%s", argv[i]);
		if (S_ISDIR(st.st_mode))
			n += replay_dir(argv[i]);
		else {
			replay_file(argv[i]);
			n++;
		}
	}
	printf("replayed %d inputs\n", n);
	return 0;
}
