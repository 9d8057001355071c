/*
 * Checking a tool's arguments.  The first problem found is kept in err;
 * later calls keep going harmlessly, so a handler reads every argument
 * and then asks args_failed() once.
 */
#ifndef MCPD_ARGS_H
#define MCPD_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define ARGS_ENV_MAX	256

struct args {
	json_t		*obj;		/* NULL: no arguments at all */
	char		 err[512];
	int		 whole;		/* err is a whole message */
};

/* known: the argument names the tool takes, NULL-terminated. */
int		 args_init(struct args *, json_t *, const char *const *);
const char	*args_str(struct args *, const char *, int, size_t);
const char	*args_bytes(struct args *, const char *, int, size_t,
		    size_t *);
int		 args_bool(struct args *, const char *, int);
uint64_t	 args_seconds(struct args *, const char *, double);
uint64_t	 args_uint(struct args *, const char *, uint64_t, uint64_t,
		    uint64_t);
uint64_t	 args_size(struct args *, const char *);
json_t		*args_strings(struct args *, const char *, int, size_t,
		    size_t);
json_t		*args_env(struct args *, const char *);
int		 args_failed(const struct args *);

#endif
