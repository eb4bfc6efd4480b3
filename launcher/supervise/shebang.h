/*
 * shebang.h: whether a script's "#!" line names a Python interpreter, so
 * that cgrun runs it under $PYTHON_EXEC as torchrun would (spawn.c).
 */
#ifndef CGRUN_SHEBANG_H
#define CGRUN_SHEBANG_H

#include <stddef.h>

#define SHEBANG_LINE_MAX	256	/* bytes of a #! line that are read */

/*
 * Contract: buf holds the first len bytes of a file (any bytes, no NUL
 * needed).  Returns 1 when it starts with "#!" and the interpreter, or
 * the program that /usr/bin/env (with options such as -S or -u NAME, and
 * NAME=VALUE settings) runs, is called python, python3, python3.12 or
 * the like: "python" followed by nothing but digits and dots.  Returns 0
 * otherwise, and for a line longer than SHEBANG_LINE_MAX without an end.
 */
int	shebang_names_python(const char *buf, size_t len);

#endif
