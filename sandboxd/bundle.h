/*
 * OCI bundles for the sandboxes: the config.json that runc reads, and the
 * seccomp profile, inside it or compiled for sandbox-init to load.
 *
 * Everything in a configuration comes from these parameters and from
 * compile-time policy, never from request text.
 */
#ifndef MCPD_BUNDLE_H
#define MCPD_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define SBX_UID_RANGE	65536		/* container uids 0..65535 */
#define SBX_USER_UID	1000		/* the sandbox user inside */
#define SBX_INIT_PATH	"/.mcpd/sandbox-init"	/* sandbox-init, inside */
#define SBX_WORKSPACE	"/workspace"
#define BUNDLE_CPU_PERIOD	100000		/* us, of the CFS quota */
/* Where sandboxd's containers get the compiled filter (runc --preserve-fds). */
#define SBX_FILTER_FD	4
/*
 * runsc passes a container its stdio alone: the control socket is its
 * stdin and the filter its stdout.  Its host cgroup holds gVisor's own
 * threads and stub processes beside the sandbox's, so its pids limit is
 * the sandbox's plus this; the sandbox's own is RLIMIT_NPROC, which
 * gVisor's kernel enforces.
 */
#define SBX_RUNSC_CTL_FD	0
#define SBX_RUNSC_FILTER_FD	1
#define BUNDLE_RUNSC_PIDS	256

struct image;				/* policy.h */
struct limits;				/* policy.h */
struct image_host;			/* image.h */

struct bundle {
	const char		*id;		/* 32 lowercase hex digits */
	const char		*dir;		/* existing bundle directory */
	const struct image	*image;		/* policy image */
	/*
	 * The prepared host image (IMAGE_HOST), or for IMAGE_ROOTFS the
	 * synthetic etc files.
	 */
	const struct image_host	*host;
	const char		*init;		/* sandbox-init on the host */
	uint32_t		 uid_base;	/* host uid of container uid 0 */
	const struct limits	*limits;
	/* Host dir bound rw at /workspace, or NULL: a tmpfs of disk bytes. */
	const char		*workspace;
	const char		*cgroup;	/* cgroupsPath, "/mcpd/<id>" */
	int			 memsw;		/* the kernel accounts swap */
	/*
	 * 0: the seccomp profile is in the configuration and runc compiles
	 * it.  Otherwise the descriptor (3 to 255) on which sandbox-init
	 * finds bundle_filter()'s program and loads it itself ("-s fd").
	 */
	int			 filter_fd;
	int			 runsc;		/* for gVisor's runsc */
	/* A network namespace to join (runsc with egress), or NULL: new. */
	const char		*netns;
};

/* The config.json document, or NULL with a message in err. */
json_t	*bundle_config(const struct bundle *, char *err, size_t errlen);

/*
 * The writable mounts of a one-shot container without network, as a wipe
 * makes them afresh (sandboxd/reuse.c): what bundle_config() gives runc,
 * with the owners runc's mounts take from the user namespace written out
 * (the helper mounts from outside it).
 */
#define BUNDLE_FRESH_MOUNTS	3
struct bundle_fresh {
	const char	*path;
	unsigned long	 flags;		/* MS_* */
	char		 data[160];
};
int	 bundle_fresh_mounts(struct bundle_fresh[BUNDLE_FRESH_MOUNTS],
	    uint64_t disk, uint32_t uid_base);
/* Write dir/config.json atomically, mode 0600: 0, or -1 with err. */
int	 bundle_write(const struct bundle *, char *err, size_t errlen);

/* The linux.seccomp object of every container. */
json_t	*bundle_seccomp(void);
/*
 * The same profile compiled to the classic BPF program runc would load,
 * in a sealed read-only memfd (close-on-exec): the fd, or -1 with err.
 */
int	 bundle_filter(char *err, size_t errlen);

#endif
