/*
 * sandbox-init's shell shortcut (sandboxd/init/shword.c): which sh -c
 * scripts it execs itself, and that their words are exactly the ones
 * /bin/sh would have exec'd.  Each script it takes is also run by the
 * real /bin/sh, with PATH leading to a program that prints its
 * arguments, and the two must agree.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../sandboxd/init/init.h"
#include "../tap.h"

static char	 dir[] = "/tmp/test_shword.XXXXXX";

/* What /bin/sh -c script sh args... ran: its argv, NUL-separated. */
static size_t
sh_ran(const char *script, char *const args[], size_t nargs, char *out,
    size_t max)
{
	const char	*argv[16];
	char		 path[256];
	int		 p[2];
	size_t		 i, n = 0;
	ssize_t		 r;
	pid_t		 pid;

	if (pipe(p) == -1 || (pid = fork()) == -1)
		return 0;
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		snprintf(path, sizeof(path), "PATH=%s", dir);
		putenv(path);
		argv[0] = "sh";
		argv[1] = "-c";
		argv[2] = script;
		argv[3] = "sh";
		for (i = 0; i < nargs && i < 10; i++)
			argv[4 + i] = args[i];
		argv[4 + i] = NULL;
		execv("/bin/sh", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (n < max && (r = read(p[0], out + n, max - n)) > 0)
		n += (size_t)r;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return n;
}

/* The words, as the argument printer prints them. */
static size_t
flat(char **v, char *out)
{
	size_t	 n = 0, i, k;

	for (i = 0; v[i] != NULL; i++) {
		k = strlen(v[i]) + 1;
		memcpy(out + n, v[i], k);
		n += k;
	}
	return n;
}

/* Taken, with these words, the same as the shell's. */
static void
simple(const char *script, char *const args[], size_t nargs,
    const char *const want[], const char *what)
{
	char	**v, got[4096], ran[4096], exp[4096];
	size_t	 i, ng, nr, ne = 0;
	int	 same = 1;

	if ((v = sh_simple(script, args, nargs)) == NULL) {
		ok(0, "%s: taken", what);
		return;
	}
	for (i = 0; want[i] != NULL; i++)
		same &= v[i] != NULL && strcmp(v[i], want[i]) == 0;
	same &= v[i] == NULL;
	ok(same, "%s: its words", what);
	ng = flat(v, got);
	for (i = 0; want[i] != NULL; i++) {
		memcpy(exp + ne, want[i], strlen(want[i]) + 1);
		ne += strlen(want[i]) + 1;
	}
	nr = sh_ran(script, args, nargs, ran, sizeof(ran));
	if (!ok(nr == ng && memcmp(ran, got, ng) == 0,
	    "%s: what /bin/sh runs", what))
		diag("sh ran %zu bytes, sh_simple has %zu", nr, ng);
	free(v);
}

static void
shell(const char *script, const char *what)
{
	char	**v;

	v = sh_simple(script, NULL, 0);
	ok(v == NULL, "left to the shell: %s", what);
	free(v);
}

/* Programs that print their arguments, NUL-separated, argv[0] first. */
static int
printers(void)
{
	const char	*names[] = { "python3", "prog", "gcc", "node" };
	char		 path[256];
	FILE		*f;
	size_t		 i;

	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/print", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "#!/bin/sh\nprintf '%%s\\0' \"${0##*/}\"\n"
	    "for a; do printf '%%s\\0' \"$a\"; done\n");
	fclose(f);
	chmod(path, 0755);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (symlink("print", path) == -1)
			return -1;
	}
	return 0;
}

static void
cleanup(void)
{
	char	 cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
}

int
main(void)
{
	static char	 a0[] = "a b", a1[] = "", a2[] = "$x", a3[] = "*";
	char *const	 args[] = { a0, a1, a2, a3 };

	if (printers() == -1) {
		ok(0, "argument printers in %s", dir);
		return tap_done();
	}
	simple("python3 main.py", NULL, 0,
	    (const char *[]){ "python3", "main.py", NULL }, "a plain command");
	simple("exec python3 main.py \"$@\"", args, 4,
	    (const char *[]){ "python3", "main.py", "a b", "", "$x", "*",
	    NULL }, "exec and \"$@\", the policy's form, args untouched");
	simple("prog \"$@\"", NULL, 0, (const char *[]){ "prog", NULL },
	    "\"$@\" with no args");
	simple("python3 -c 'print(1)'", NULL, 0,
	    (const char *[]){ "python3", "-c", "print(1)", NULL },
	    "single quotes keep ( and )");
	simple("prog \"a (b)\" 'c;d|e>f' x=y '$HOME' \"it's\"", NULL, 0,
	    (const char *[]){ "prog", "a (b)", "c;d|e>f", "x=y", "$HOME",
	    "it's", NULL }, "quoted operators, an = after the command");
	simple("prog a''b \"\" '' c\"d\"'e'", NULL, 0,
	    (const char *[]){ "prog", "ab", "", "", "cde", NULL },
	    "empty quotes, and quotes inside a word");
	simple(" \tgcc  -O2\t-o main main.c  ", NULL, 0,
	    (const char *[]){ "gcc", "-O2", "-o", "main", "main.c", NULL },
	    "blanks around and between");
	simple("node --opt=1 @x %y +z ,w :v a.b/c_d-e", NULL, 0,
	    (const char *[]){ "node", "--opt=1", "@x", "%y", "+z", ",w", ":v",
	    "a.b/c_d-e", NULL }, "punctuation the shell leaves alone");
	simple("exec prog", NULL, 0, (const char *[]){ "prog", NULL },
	    "exec dropped");
	simple("'prog' x", NULL, 0, (const char *[]){ "prog", "x", NULL },
	    "a quoted command name");

	shell("echo hi", "a builtin");
	shell("cd /tmp", "cd");
	shell("'echo' hi", "a quoted builtin is still one");
	shell("if true; then prog; fi", "a reserved word");
	shell("FOO=1 prog", "an assignment first");
	shell("exec FOO=1 prog", "one after exec");
	shell("prog *.c", "a glob");
	shell("prog [ab]", "a bracket glob");
	shell("prog a?", "a ? glob");
	shell("prog ~", "a tilde");
	shell("prog {a,b}", "braces");
	shell("prog $HOME", "a variable");
	shell("prog \"$HOME\"", "a variable in double quotes");
	shell("prog \"a\\\"b\"", "an escape in double quotes");
	shell("prog a\\ b", "an escape");
	shell("prog `id`", "a command substitution");
	shell("prog; prog", "a list");
	shell("prog | prog", "a pipe");
	shell("prog > f", "a redirection");
	shell("prog &", "the background");
	shell("prog # note", "a comment");
	shell("prog\nprog", "two lines");
	shell("! prog", "a negation");
	shell("prog 'open", "an unterminated single quote");
	shell("prog \"open", "an unterminated double quote");
	shell("", "nothing");
	shell(" \t ", "blanks alone");
	shell("exec", "exec alone");
	shell("exec -a name prog", "exec's options");
	shell("-prog", "a command name like an option");
	shell("\"$@\" \"$@\"", "\"$@\" twice");
	shell("prog \"$@\"x", "\"$@\" inside a word");
	cleanup();
	return tap_done();
}
