/*
 * sandbox-init: PID 1 of every sandbox container.  It runs the user's
 * commands and does file I/O in the workspace for sandboxd, over the imsg
 * socket the container inherits (see the IMSG_INIT_* part of proto.h).
 */
#ifndef SANDBOX_INIT_H
#define SANDBOX_INIT_H

#include <sys/queue.h>
#include <sys/stat.h>

#include <linux/openat2.h>

#include <poll.h>
#include <stdint.h>

#include "imsg.h"
#include "proto.h"

#define INIT_HELD_FDS_MAX	64	/* fds awaiting their EXEC frame */
#define INIT_OPS_MAX		16	/* file operations without DONE */
#define INIT_LIST_DEPTH		32	/* subdirectory levels LIST descends */
#define INIT_DELETE_DEPTH	128	/* ... and DELETE */
/* Streaming READ and LIST answers stop being produced above this. */
#define INIT_QUEUE_LOWAT	(512 * 1024)

extern struct imsgbuf	 ibuf;		/* the control socket */
extern int		 wsfd;		/* the workspace, O_PATH */

/* init.c */
void	 init_send(uint32_t, uint32_t, const void *, size_t);
void	 init_sendv(uint32_t, uint32_t, const struct iovec *, int);
/* The same with an fd attached, which the queue owns from here on. */
void	 init_sendv_fd(uint32_t, uint32_t, int, const struct iovec *, int);
__attribute__((__noreturn__, __format__(printf, 1, 2)))
void	 init_violation(const char *, ...);
int	 ws_openat(int, const char *, int, mode_t, uint64_t);
void	 close_fds_except(int, int);

/* exec.c */
void	 exec_fd(struct imsg *);
void	 exec_start(struct imsg *);
void	 exec_reap(void);
int	 exec_pollfds(struct pollfd *, int);
void	 exec_pollevents(const struct pollfd *, int);
int	 exec_npollfds(void);
void	 exec_killall(void);
int	 exec_busy(void);
void	 exec_forget(void);
void	 exec_signalall(int);

/* shword.c */
char	**sh_simple(const char *, char *const [], size_t);

/* files.c */
void	 file_dispatch(struct imsg *);
void	 file_data(struct imsg *);
void	 file_step(void);
int	 file_busy(void);
void	 file_list_run(uint32_t);

#endif
