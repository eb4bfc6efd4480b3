/*
 * config.h: cgrun-rdzvd's settings, from /etc/cgrun/rdzvd.conf and from the
 * command line, through one table.
 *
 * Every configuration key is also a long flag of the same name:
 * "max-connections = 1000" in the file is "--max-connections=1000" on the
 * command line (the file also accepts underscores, "max_connections").
 * The command line is applied after the file, so flags win.
 *
 * File syntax: one "key = value" per line; blank lines and lines whose
 * first non-blank character is '#' are ignored; a value may be quoted with
 * double quotes; "host" may be given several times or as a comma list.
 * Bounded: at most CONFIG_FILE_MAX bytes, CONFIG_LINE_MAX bytes a line.
 */
#ifndef CGRUN_CONFIG_H
#define CGRUN_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "rdzv.h"
#include "store.h"

#define CONFIG_DEFAULT_PATH	"/etc/cgrun/rdzvd.conf"
#define CONFIG_DEFAULT_PORT	29400
#define CONFIG_FILE_MAX		(64 * 1024)	/* bytes in a config file */
#define CONFIG_LINE_MAX		1024		/* bytes in one line */
#define CONFIG_KEY_MAX		64		/* bytes in one key */
#define CONFIG_HOST_MAX		256		/* bytes in one address */
#define CONFIG_MAX_HOSTS	16		/* listen addresses */

enum config_type {
	CONFIG_T_HOSTS,		/* address list: repeated or comma-separated */
	CONFIG_T_STR,		/* one string up to CONFIG_HOST_MAX - 1 bytes */
	CONFIG_T_INT,		/* int within [min, max] */
	CONFIG_T_SIZE,		/* size_t within [min, max]; k/M/G suffixes */
	CONFIG_T_UINT,		/* unsigned within [min, max] */
	CONFIG_T_LEVEL		/* log level: warn, info, debug or 0..2 */
};

/* Everything cgrun-rdzvd can be told. */
struct rdzvd_config {
	char	hosts[CONFIG_MAX_HOSTS][CONFIG_HOST_MAX];
	size_t	nhosts;			/* 0: all addresses */
	int	port;			/* store and rendezvous port */
	struct store_limits limits;
	struct rdzv_limits rdzv_limits;	/* jobs a peer can make it hold */
	char	http_host[CONFIG_HOST_MAX];	/* observability address */
	int	http_port;		/* -1: no HTTP server; 0: ephemeral */
	int	log_level;		/* LOG_LVL_* */
	unsigned shutdown_timeout_ms;	/* flush time for peers on SIGTERM */
	unsigned watchdog_ms;		/* 0: from WATCHDOG_USEC, if any */
	char	auth_token_file[CONFIG_HOST_MAX];	/* "": no auth */
	char	tcpstore_allow[CONFIG_HOST_MAX];	/* CIDR list; "": any */
	int	hosts_from_file;	/* internal: first flag replaces them */
};

/* One row of the option table: a file key and the flag "--key". */
struct config_opt {
	const char	*key;
	enum config_type type;
	size_t		 offset;	/* into struct rdzvd_config */
	unsigned long long min, max;
	const char	*argname;	/* for --help: "N", "ADDR", ... */
	const char	*help;
};

extern const struct config_opt config_opts[];
extern const size_t config_nopts;

/* Defaults: every address, port 29400, store_limits_default(),
 * rdzv_limits_default(), no HTTP. */
void	config_defaults(struct rdzvd_config *);

/* The table row for key ("max_key_size" and "max-key-size" alike), or NULL. */
const struct config_opt *config_find(const char *key, size_t keylen);

/* Set one key from its text value; from_file marks file-given hosts. */
int	config_set(struct rdzvd_config *, const char *key, const char *value,
	    int from_file, char *err, size_t errlen);

/*
 * Parse a whole configuration text (need not end in a newline) into cfg.
 * Pure and bounded: no I/O, no allocation, at most CONFIG_FILE_MAX bytes.
 * Returns 0, or -1 with "line N: reason" in err; cfg may then be partly
 * updated.
 */
int	config_parse(struct rdzvd_config *, const char *buf, size_t len,
	    char *err, size_t errlen);

/* Read and parse a file; missing_ok: a missing file is not an error. */
int	config_load(struct rdzvd_config *, const char *path, int missing_ok,
	    char *err, size_t errlen);

/* Cross-key checks done after file and flags (e.g. max-input >= max-key). */
int	config_check(const struct rdzvd_config *, char *err, size_t errlen);

/* Write the configuration in file syntax (for -n -v). */
void	config_dump(const struct rdzvd_config *, FILE *);

/* One "--key=ARG  help" line per table row, for --help. */
void	config_usage(FILE *);

#endif /* CGRUN_CONFIG_H */
