/*
 * What every fuzz target shares: the libFuzzer entry points, which the
 * replay driver (replay.c) calls as well, and helpers for the set-up a
 * target needs once (fuzzlib.c).
 */
#ifndef MCPD_FUZZ_H
#define MCPD_FUZZ_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

int		 LLVMFuzzerInitialize(int *, char ***);
int		 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A private directory for the process's files, removed at exit. */
const char	*fuzz_tmpdir(void);
/* The path of a file in it, malloc'd: the caller keeps it. */
char		*fuzz_path(const char *);
/* Replace the file's content. */
void		 fuzz_write(const char *, const void *, size_t);
/* The policy of this text, loaded as the daemons load theirs. */
struct policy	*fuzz_policy(const char *);

/* One sendmsg() of len bytes, with nfds (0 to 3) copies of passfd. */
ssize_t		 fuzz_send(int, const uint8_t *, size_t, int, int, int);

/* A cursor over the input, for targets that take it in pieces. */
struct fuzz_in {
	const uint8_t	*p;
	size_t		 left;
};

uint8_t		 fuzz_u8(struct fuzz_in *);
uint16_t	 fuzz_u16(struct fuzz_in *);
/* Up to n bytes, fewer at the end of the input; *len says how many. */
const uint8_t	*fuzz_bytes(struct fuzz_in *, size_t, size_t *);

#endif
