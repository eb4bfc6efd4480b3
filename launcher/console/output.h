/*
 * output.h: one worker stream (stdout or stderr) read from its pipe on the
 * agent's event loop and written out as whole lines: to the console with a
 * per-rank prefix, raw to a tee file, and prefixed to a filter file for
 * lines matching --duplicate-*-filters.  A line ends with "\n", "\r\n"
 * or a lone "\r" (progress bars).  Partial lines wait for their end
 * (lines longer than OUTPUT_LINE_MAX are cut into pieces); at EOF the last
 * partial line is written with a newline added, so nothing is lost.
 * An eager stream (the worker reading the terminal: prompts, readline's
 * echo) writes a partial line to the console once nothing more came for
 * OUTPUT_EAGER_USEC (so lines written in pieces stay whole); its line
 * stays open (continued without a prefix) until it ends or another stream
 * writes to the console, which first ends it with a newline: lines never
 * mix.
 */
#ifndef CGRUN_OUTPUT_H
#define CGRUN_OUTPUT_H

#include <stddef.h>

#define OUTPUT_LINE_MAX		(64 * 1024)	/* bytes buffered per stream */
#define OUTPUT_PREFIX_MAX	256		/* bytes of one line prefix */
#define OUTPUT_EAGER_USEC	20000		/* quiet before a prompt shows */

struct event_base;
struct output;

struct output_conf {
	int		 console_fd;	/* 1, 2, or -1: not shown */
	const char	*prefix;	/* copied */
	const char	*filter_prefix;	/* for filter_fd; NULL: prefix */
	int		 file_fd;	/* tee file (taken over), or -1 */
	int		 filter_fd;	/* not owned, or -1 */
	const char	*filters;	/* comma list ("," as ",,"), or NULL */
	int		 eager;		/* console: partial lines when quiet */
	int		 pty;		/* fd is a pty master (tty.c) */
	void		(*on_eof)(void *arg);	/* after the last byte */
	void		(*on_lines)(void *arg);	/* whole lines were written
						 * (once per batch), or NULL */
	void		*arg;
};

/* Watch pipe fd (taken over, made non-blocking); NULL with errno. */
struct output *output_new(struct event_base *, int fd, const struct output_conf *);
/* Read what is left without blocking, write it out, close; no on_eof. */
void	output_drain(struct output *);
void	output_free(struct output *);
/*
 * Also give every whole line read from now on (raw, terminator included,
 * before any prefix) to fn, and (NULL, 0) at EOF; fn NULL removes it.
 * The hang diagnosis reads Python's fault handler dump this way.
 */
void	output_tap(struct output *, void (*fn)(void *arg, const char *line,
	    size_t len), void *arg);
/* Whether the stream reached EOF. */
int	output_eof(const struct output *);

/* Write all of buf to fd (a console or file), waiting if it is full;
 * what cannot be written is counted, its first loss said on stderr. */
void	output_write_all(int fd, const void *buf, size_t len);
/* fd 1 or 2 was closed when cgrun started: output to it is lost. */
void	output_console_closed(int fd);
/* Say, once per sink, how much worker output was lost (job's end). */
void	output_report_losses(void);

#endif
