/*
 * sandbox-init: the container's seccomp filter, loaded from a descriptor.
 *
 * sandboxd compiles the profile once (bundle_filter() in bundle.c) and
 * hands every container the same sealed memfd; runc would compile it
 * again for each one, which costs a few milliseconds of CPU per run.
 * This is the first thing sandbox-init does, before it reads a byte from
 * sandboxd, and sandbox-init is static: no code from the image runs
 * before the filter is in place.
 *
 * Kept apart from the rest of sandbox-init, with no dependency on it, so
 * that the bundle test's probe loads the filter with this same code.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scfilter.h"

int
seccomp_load_fd(int fd, char *err, size_t len)
{
	struct sock_fprog	 prog;
	struct sock_filter	*insns;
	struct stat		 st;
	size_t			 size, got = 0;
	ssize_t			 n;

	if (fstat(fd, &st) == -1) {
		snprintf(err, len, "filter fd %d: %s", fd, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(*insns) != 0 ||
	    st.st_size / (off_t)sizeof(*insns) > BPF_MAXINSNS) {
		snprintf(err, len, "filter fd %d: not a BPF program (%lld "
		    "bytes)", fd, (long long)st.st_size);
		return -1;
	}
	size = (size_t)st.st_size;
	if ((insns = malloc(size)) == NULL) {
		snprintf(err, len, "filter: out of memory");
		return -1;
	}
	/*
	 * pread: every container shares the one open file description, and
	 * so its offset.
	 */
	while (got < size) {
		n = pread(fd, (char *)insns + got, size - got, (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, len, "filter fd %d: %s", fd,
			    n == 0 ? "short read" : strerror(errno));
			free(insns);
			return -1;
		}
		got += (size_t)n;
	}
	prog.len = (unsigned short)(size / sizeof(*insns));
	prog.filter = insns;
	/*
	 * runc has set no_new_privs already (noNewPrivileges in the
	 * configuration); without it the kernel would refuse the filter
	 * to a process without CAP_SYS_ADMIN.  No flags: in particular not
	 * SPEC_ALLOW, so the speculative store bypass mitigation stays.
	 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == -1) {
		snprintf(err, len, "loading the seccomp filter: %s",
		    strerror(errno));
		free(insns);
		return -1;
	}
	free(insns);
	return 0;
}
