/*
 * sandbox-init: loading the container's seccomp filter (scfilter.c).
 */
#ifndef SANDBOX_INIT_SCFILTER_H
#define SANDBOX_INIT_SCFILTER_H

#include <stddef.h>

/*
 * Set no_new_privs and install the classic BPF program that fd holds,
 * read whole from offset 0 without moving the file offset: 0, or -1
 * with a message in err.
 */
int	 seccomp_load_fd(int fd, char *err, size_t len);

#endif
