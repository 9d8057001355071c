/*
 * Tool arguments: each is checked for its type and bounds, and anything
 * wrong comes back as a sentence a model can act on ("'timeout' must be a
 * number of seconds between 0.001 and 86400"), never as a protocol error.
 */
#include <sys/types.h>

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "util.h"

static int	fail(struct args *, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));

static int
fail(struct args *a, const char *fmt, ...)
{
	va_list	 ap;

	if (a->err[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(a->err, sizeof(a->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
args_init(struct args *a, json_t *args, const char *const *known)
{
	const char	*key;
	json_t		*v;
	size_t		 i;
	char		 list[512];

	memset(a, 0, sizeof(*a));
	if (args == NULL || json_is_null(args)) {
		a->obj = NULL;
		return 0;
	}
	if (!json_is_object(args))
		return fail(a, "the arguments must be a JSON object");
	a->obj = args;
	json_object_foreach(args, key, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(known[i], key) == 0)
				break;
		if (known[i] != NULL)
			continue;
		list[0] = '\0';
		for (i = 0; known[i] != NULL; i++) {
			if (i > 0)
				strncat(list, ", ", sizeof(list) -
				    strlen(list) - 1);
			strncat(list, known[i], sizeof(list) - strlen(list) -
			    1);
		}
		return fail(a, "unknown argument '%.64s'; this tool takes: %s",
		    key, list[0] != '\0' ? list : "no arguments");
	}
	return 0;
}

static json_t *
get(struct args *a, const char *key, int required)
{
	json_t	*v = a->obj != NULL ? json_object_get(a->obj, key) : NULL;

	if (v != NULL && json_is_null(v))
		v = NULL;
	if (v == NULL && required)
		fail(a, "the argument '%s' is required", key);
	return v;
}

/* A string that may hold any bytes (NULs too): its length in *len. */
const char *
args_bytes(struct args *a, const char *key, int required, size_t max,
    size_t *len)
{
	json_t	*v = get(a, key, required);

	*len = 0;
	if (v == NULL)
		return NULL;
	if (!json_is_string(v)) {
		fail(a, "'%s' must be a string", key);
		return NULL;
	}
	if (json_string_length(v) > max) {
		fail(a, "'%s' is too long (at most %zu bytes)", key, max);
		return NULL;
	}
	*len = json_string_length(v);
	return json_string_value(v);
}

const char *
args_str(struct args *a, const char *key, int required, size_t max)
{
	size_t		 len;
	const char	*s = args_bytes(a, key, required, max, &len);

	if (s != NULL && strlen(s) != len) {
		fail(a, "'%s' may not contain NUL characters", key);
		return NULL;
	}
	return s;
}

int
args_bool(struct args *a, const char *key, int def)
{
	json_t	*v = get(a, key, 0);

	if (v == NULL)
		return def;
	if (!json_is_boolean(v)) {
		fail(a, "'%s' must be true or false", key);
		return def;
	}
	return json_is_true(v);
}

/* Seconds as a JSON number, into milliseconds; 0 when absent. */
uint64_t
args_seconds(struct args *a, const char *key, double max)
{
	json_t	*v = get(a, key, 0);
	double	 d;

	if (v == NULL)
		return 0;
	if (!json_is_number(v) || (d = json_number_value(v)) < 0.001 ||
	    d > max || isnan(d)) {
		fail(a, "'%s' must be a number of seconds between 0.001 and "
		    "%.0f", key, max);
		return 0;
	}
	return (uint64_t)(d * 1000.0 + 0.5);
}

uint64_t
args_uint(struct args *a, const char *key, uint64_t min, uint64_t max,
    uint64_t def)
{
	json_t	*v = get(a, key, 0);

	if (v == NULL)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) < min ||
	    (uint64_t)json_integer_value(v) > max) {
		fail(a, "'%s' must be a whole number from %llu to %llu", key,
		    (unsigned long long)min, (unsigned long long)max);
		return def;
	}
	return (uint64_t)json_integer_value(v);
}

/* A size: a number of bytes, or a string like "512M" or "1.5GiB". */
uint64_t
args_size(struct args *a, const char *key)
{
	json_t		*v = get(a, key, 0);
	const char	*s;
	char		*end;
	double		 d, mult = 1;

	if (v == NULL)
		return 0;
	if (json_is_integer(v) && json_integer_value(v) > 0)
		return (uint64_t)json_integer_value(v);
	if (!json_is_string(v))
		goto bad;
	s = json_string_value(v);
	d = strtod(s, &end);
	if (end == s || d <= 0 || isnan(d))
		goto bad;
	while (*end == ' ')
		end++;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		mult = 1024.0;
		break;
	case 'M':
		mult = 1024.0 * 1024;
		break;
	case 'G':
		mult = 1024.0 * 1024 * 1024;
		break;
	case 'T':
		mult = 1024.0 * 1024 * 1024 * 1024;
		break;
	case 'B':
	case '\0':
		break;
	default:
		goto bad;
	}
	if (mult > 1) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
	} else if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0' || d * mult > 1e15)
		goto bad;
	return (uint64_t)(d * mult);
 bad:
	fail(a, "'%s' must be a size such as 536870912, \"512M\" or "
	    "\"2G\"", key);
	return 0;
}

/* An array of strings; the count in *n. */
json_t *
args_strings(struct args *a, const char *key, int required, size_t maxn,
    size_t maxlen)
{
	json_t	*v = get(a, key, required), *el;
	size_t	 i;

	if (v == NULL)
		return NULL;
	if (!json_is_array(v)) {
		fail(a, "'%s' must be an array of strings", key);
		return NULL;
	}
	if (json_array_size(v) > maxn) {
		fail(a, "'%s' has too many items (at most %zu)", key, maxn);
		return NULL;
	}
	json_array_foreach(v, i, el) {
		if (!json_is_string(el) || json_string_length(el) > maxlen ||
		    strlen(json_string_value(el)) != json_string_length(el)) {
			fail(a, "'%s'[%zu] must be a string of at most %zu "
			    "bytes, without NUL", key, i, maxlen);
			return NULL;
		}
	}
	return v;
}

/* Environment variables: an object of NAME to string value. */
json_t *
args_env(struct args *a, const char *key)
{
	json_t		*v = get(a, key, 0), *val;
	const char	*name, *p;

	if (v == NULL)
		return NULL;
	if (!json_is_object(v)) {
		fail(a, "'%s' must be an object of variable names to string "
		    "values", key);
		return NULL;
	}
	if (json_object_size(v) > ARGS_ENV_MAX) {
		fail(a, "'%s' has too many variables (at most %d)", key,
		    ARGS_ENV_MAX);
		return NULL;
	}
	json_object_foreach(v, name, val) {
		if (name[0] == '\0' || strlen(name) > 128 ||
		    (!isalpha((unsigned char)name[0]) && name[0] != '_')) {
			fail(a, "'%s': '%.64s' is not a variable name "
			    "(letters, digits and _, not starting with a "
			    "digit)", key, name);
			return NULL;
		}
		for (p = name; *p != '\0'; p++)
			if (!isalnum((unsigned char)*p) && *p != '_') {
				fail(a, "'%s': '%.64s' is not a variable "
				    "name", key, name);
				return NULL;
			}
		if (!json_is_string(val) || strlen(json_string_value(val)) !=
		    json_string_length(val)) {
			fail(a, "'%s': the value of %s must be a string "
			    "without NUL", key, name);
			return NULL;
		}
	}
	return v;
}

int
args_failed(const struct args *a)
{
	return a->err[0] != '\0';
}
