/*
 * The words of a shell command that needs nothing of the shell.
 *
 * Run commands come as /bin/sh -c SCRIPT: the policy's language commands,
 * and sandbox_exec's command lines.  Most are one program with plain
 * arguments, "python3 main.py" or "python3 -c 'print(1)'", and starting a
 * shell only to have it exec them costs about a millisecond.  When the
 * script is made of words alone, quoted or not, with nothing the shell
 * would expand, redirect or interpret, its words are exactly what the
 * shell would exec, and sandbox-init execs them itself.
 *
 * Anything else, or any doubt, is left to the shell: a builtin or
 * reserved word first, an assignment, a glob or tilde, a variable but the
 * whole word "$@", an escape, an operator, a comment.
 */
#include <stdlib.h>
#include <string.h>

#include "init.h"

/* Whatever some /bin/sh (dash, bash, busybox ash) runs itself. */
static const char *const sh_own[] = {
	"!", ".", ":", "[", "[[", "]]", "{", "}", "alias", "bg", "bind",
	"break", "builtin", "caller", "case", "cd", "chdir", "command",
	"compgen", "complete", "compopt", "continue", "coproc", "declare",
	"dirs", "disown", "do", "done", "echo", "elif", "else", "enable",
	"esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi",
	"for", "function", "getopts", "hash", "help", "history", "if", "in",
	"jobs", "kill", "let", "local", "logout", "mapfile", "popd",
	"printf", "pushd", "pwd", "read", "readarray", "readonly", "return",
	"select", "set", "shift", "shopt", "source", "suspend", "test",
	"then", "time", "times", "trap", "true", "type", "typeset",
	"ulimit", "umask", "unalias", "unset", "until", "wait", "while",
};

static int
sh_plain(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("_./+-,:@%=", c) != NULL;
}

static int
sh_blank(int c)
{
	return c == ' ' || c == '\t';
}

static int
sh_is_own(const char *w)
{
	size_t	 i;

	for (i = 0; i < sizeof(sh_own) / sizeof(sh_own[0]); i++)
		if (strcmp(w, sh_own[i]) == 0)
			return 1;
	return 0;
}

/*
 * One word from *sp into out (NUL-terminated); *sp moves past it.
 * Returns 1 for a word, 2 for "$@", 0 when the shell is needed.
 */
static int
sh_word(const char **sp, char *out, int *quoted)
{
	const char	*s = *sp, *end;

	if (strncmp(s, "\"$@\"", 4) == 0 && (s[4] == '\0' || sh_blank(s[4]))) {
		*sp = s + 4;
		return 2;
	}
	*quoted = 0;
	while (*s != '\0' && !sh_blank(*s)) {
		if (*s == '\'') {
			if ((end = strchr(s + 1, '\'')) == NULL)
				return 0;
			memcpy(out, s + 1, (size_t)(end - s - 1));
			out += end - s - 1;
			s = end + 1;
			*quoted = 1;
		} else if (*s == '"') {
			end = s + 1 + strcspn(s + 1, "\"$`\\");
			if (*end != '"')
				return 0;
			memcpy(out, s + 1, (size_t)(end - s - 1));
			out += end - s - 1;
			s = end + 1;
			*quoted = 1;
		} else if (sh_plain((unsigned char)*s))
			*out++ = *s++;
		else
			return 0;
	}
	*out = '\0';
	*sp = s;
	return 1;
}

char **
sh_simple(const char *script, char *const args[], size_t nargs)
{
	const char	*s = script;
	char		**v, *text;
	size_t		 len, max, n = 0, i, first = 0;
	int		 r, quoted, at = 0;

	len = strlen(script);
	/* Words are at least a character and a blank apart. */
	max = len / 2 + 2 + nargs;
	if ((v = malloc(max * sizeof(*v) + len + 1)) == NULL)
		return NULL;
	text = (char *)(v + max);
	for (;;) {
		while (sh_blank(*s))
			s++;
		if (*s == '\0')
			break;
		if ((r = sh_word(&s, text, &quoted)) == 0)
			goto shell;
		if (r == 2) {
			if (at++ > 0)
				goto shell;
			for (i = 0; i < nargs; i++)
				v[n++] = args[i];
			continue;
		}
		/* An assignment, when an unquoted name= starts the command. */
		if (n == first && !quoted && strchr(text, '=') != NULL)
			goto shell;
		if (n == first && !quoted && strcmp(text, "exec") == 0 &&
		    first == 0 && n == 0) {
			first = 1;	/* dropped; a placeholder keeps count */
			v[n++] = NULL;
			continue;
		}
		v[n++] = text;
		text += strlen(text) + 1;
	}
	if (first == 1) {
		/* exec's own options (bash's -a, -c, -l) are the shell's. */
		memmove(v, v + 1, --n * sizeof(*v));
	}
	if (n == 0 || v[0] == NULL || *v[0] == '\0' || *v[0] == '-' ||
	    sh_is_own(v[0]))
		goto shell;
	v[n] = NULL;
	return v;
shell:
	free(v);
	return NULL;
}
