/*
 * checkpoint.c: crash-safe checkpoint files (temporary file, fsync,
 * rename, fsync of the directory), retention of the newest K, and loading
 * of the newest complete one.  The file layout is in ckpt_format.h.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgrun/checkpoint.h"
#include "ckpt_format.h"
#include "le.h"
#include "util.h"

#define CKPT_SUFFIX	".ckpt"
#define CKPT_DIGITS	20
#define CKPT_CHUNK	(1u << 20)	/* read size when verifying */
#define CKPT_MAX_STEPS	(1u << 20)	/* files of one set considered */

struct cgrun_ckpt {
	int	 dirfd;
	int	 keep;
	char	*dir;
	char	 name[CGRUN_CKPT_MAX_NAME + 1];
	char	 host[256];
};

static uint32_t ckpt_crc_table[256];
static pthread_once_t ckpt_crc_once = PTHREAD_ONCE_INIT;

/* Build the CRC-32C (Castagnoli, reflected) lookup table. */
static void
ckpt_crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		ckpt_crc_table[i] = c;
	}
}

/* Continue a CRC-32C over len bytes (start with crc 0). */
uint32_t
ckpt_crc(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	pthread_once(&ckpt_crc_once, ckpt_crc_init);
	crc = ~crc;
	while (len-- > 0)
		crc = ckpt_crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* Encode a header into buf (CKPT_HDRLEN bytes). */
void
ckpt_hdr_encode(unsigned char *buf, const struct ckpt_hdr *h)
{
	memset(buf, 0, CKPT_HDRLEN);
	memcpy(buf, CKPT_MAGIC, 8);
	le_put_u32(buf + 8, CKPT_VERSION);
	le_put_u32(buf + 12, CKPT_HDRLEN);
	le_put_u64(buf + 16, h->step);
	le_put_u64(buf + 24, h->len);
	le_put_u32(buf + 32, h->crc);
	le_put_u32(buf + 60, ckpt_crc(0, buf, 60));
}

/* Decode and check a header: 0 if valid, -1 if not. */
int
ckpt_hdr_decode(const unsigned char *buf, struct ckpt_hdr *h)
{
	if (memcmp(buf, CKPT_MAGIC, 8) != 0 ||
	    le_get_u32(buf + 8) != CKPT_VERSION ||
	    le_get_u32(buf + 12) != CKPT_HDRLEN ||
	    le_get_u32(buf + 60) != ckpt_crc(0, buf, 60))
		return -1;
	h->step = le_get_u64(buf + 16);
	h->len = le_get_u64(buf + 24);
	h->crc = le_get_u32(buf + 32);
	return 0;
}

/* A name may hold letters, digits, '.', '_', '-' and not start with '.'. */
static int
ckpt_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > CGRUN_CKPT_MAX_NAME || name[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-", name[i]) == NULL)
			return 0;
	return 1;
}

/* Make a new directory's entry durable: fsync its parent. */
static void
ckpt_sync_parent(const char *dir)
{
	char *copy = strdup(dir), *slash;
	int fd;

	if (copy == NULL)
		return;
	while ((slash = strrchr(copy, '/')) != NULL && slash[1] == '\0' &&
	    slash != copy)
		*slash = '\0';	/* trailing slashes */
	slash = strrchr(copy, '/');
	if (slash == copy)
		slash[1] = '\0';	/* "/x": parent is "/" */
	else if (slash != NULL)
		*slash = '\0';
	fd = open(slash != NULL ? copy : ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (fd != -1) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

/* Create dir if it does not exist and open it; -1 with a message. */
static int
ckpt_open_dir(const char *dir, char *err)
{
	int fd;

	if (mkdir(dir, 0755) == 0)
		ckpt_sync_parent(dir);
	else if (errno != EEXIST) {
		cgrun_seterr(err, "checkpoint directory %s: mkdir: %s", dir,
		    strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		cgrun_seterr(err, "checkpoint directory %s: %s", dir,
		    strerror(errno));
	return fd;
}

/* Open a checkpoint set `name` in dir keeping the newest `keep`. */
CGRUN_EXPORT struct cgrun_ckpt *
cgrun_ckpt_new(const char *dir, const char *name, int keep, char *err)
{
	struct cgrun_ckpt *c;

	if (dir == NULL || *dir == '\0' || name == NULL || !ckpt_name_ok(name) ||
	    keep < 1) {
		errno = EINVAL;
		cgrun_seterr(err, "checkpoint: bad arguments (directory, name of "
		    "[A-Za-z0-9._-] not starting with '.', keep >= 1)");
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->dir = strdup(dir)) == NULL) {
		free(c);
		cgrun_seterr(err, "out of memory");
		return NULL;
	}
	if ((c->dirfd = ckpt_open_dir(dir, err)) == -1) {
		free(c->dir);
		free(c);
		return NULL;
	}
	c->keep = keep;
	memcpy(c->name, name, strlen(name) + 1);
	if (gethostname(c->host, sizeof(c->host) - 1) == -1 ||
	    c->host[0] == '\0' || strchr(c->host, '/') != NULL)
		strcpy(c->host, "localhost");
	return c;
}

/* Release the handle. */
CGRUN_EXPORT void
cgrun_ckpt_free(struct cgrun_ckpt *c)
{
	if (c == NULL)
		return;
	close(c->dirfd);
	free(c->dir);
	free(c);
}

/* File name (relative to the directory) of step into buf. */
static int
ckpt_file(const struct cgrun_ckpt *c, uint64_t step, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-%0*llu%s", c->name, CKPT_DIGITS,
	    (unsigned long long)step, CKPT_SUFFIX);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Path of step's file. */
CGRUN_EXPORT int
cgrun_ckpt_path(const struct cgrun_ckpt *c, uint64_t step, char *buf,
    size_t len)
{
	char file[CGRUN_CKPT_MAX_NAME + 64];
	int n;

	if (c == NULL || buf == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (ckpt_file(c, step, file, sizeof(file)) == -1)
		return -1;
	n = snprintf(buf, len, "%s/%s", c->dir, file);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Step of a final file name of this set, or -1 if it is not one. */
static int
ckpt_parse_file(const struct cgrun_ckpt *c, const char *f, uint64_t *step)
{
	size_t n = strlen(c->name);
	uint64_t v = 0;
	int i;

	if (strlen(f) != n + 1 + CKPT_DIGITS + strlen(CKPT_SUFFIX) ||
	    strncmp(f, c->name, n) != 0 || f[n] != '-' ||
	    strcmp(f + n + 1 + CKPT_DIGITS, CKPT_SUFFIX) != 0)
		return -1;
	for (i = 0; i < CKPT_DIGITS; i++) {
		char d = f[n + 1 + i];

		if (d < '0' || d > '9' ||
		    v > (UINT64_MAX - (uint64_t)(d - '0')) / 10)
			return -1;	/* not a digit, or above UINT64_MAX */
		v = v * 10 + (uint64_t)(d - '0');
	}
	*step = v;
	return 0;
}

/* Write all iov pieces to fd, resuming after short writes and EINTR. */
static int
ckpt_writev_all(int fd, struct iovec *iov, int iovcnt)
{
	ssize_t n;

	while (iovcnt > 0) {
		n = writev(fd, iov, iovcnt > IOV_MAX ? IOV_MAX : iovcnt);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Temporary file name of a save of step by this process. */
static void
ckpt_tmpname(const struct cgrun_ckpt *c, uint64_t step, char *buf,
    size_t len)
{
	snprintf(buf, len, ".%s.tmp.%ld.%llu.%s", c->name, (long)getpid(),
	    (unsigned long long)step, c->host);
}

/* Write header and payload into a new file tmp, fsync and close it. */
static int
ckpt_write_tmp(struct cgrun_ckpt *c, const char *tmp, const struct ckpt_hdr *h,
    const struct iovec *iov, int iovcnt)
{
	unsigned char hdr[CKPT_HDRLEN];
	struct iovec *v;
	int fd, rc, saved;

	if ((v = calloc((size_t)iovcnt + 1, sizeof(*v))) == NULL)
		return -1;
	ckpt_hdr_encode(hdr, h);
	v[0].iov_base = hdr;
	v[0].iov_len = sizeof(hdr);
	if (iovcnt > 0)
		memcpy(v + 1, iov, (size_t)iovcnt * sizeof(*v));
	(void)unlinkat(c->dirfd, tmp, 0);	/* a dead writer with our pid */
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644);
	if (fd == -1) {
		free(v);
		return -1;
	}
	rc = ckpt_writev_all(fd, v, iovcnt + 1);
	if (rc == 0)
		rc = fsync(fd);
	saved = errno;
	if (close(fd) == -1 && rc == 0)
		rc = -1;
	else
		errno = saved;
	free(v);
	return rc;
}

/* Whether a temporary file of this set was left by a dead local writer. */
static int
ckpt_tmp_stale(const struct cgrun_ckpt *c, const char *f)
{
	char pre[CGRUN_CKPT_MAX_NAME + 8], *end;
	const char *p;
	long pid;
	int n;

	n = snprintf(pre, sizeof(pre), ".%s.tmp.", c->name);
	if (n < 0 || strncmp(f, pre, (size_t)n) != 0)
		return 0;
	p = f + n;
	pid = strtol(p, &end, 10);
	if (end == p || *end != '.' || pid <= 0)
		return 0;
	if ((p = strchr(end + 1, '.')) == NULL || strcmp(p + 1, c->host) != 0)
		return 0;
	if (pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) == -1 && errno == ESRCH;
}

/* Compare steps, newest first (qsort). */
static int
ckpt_cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * List the steps <= max_step of this set, newest first, into a malloc'd
 * array; with prune, remove stale temporary files on the way.  The count,
 * or -1 with errno.
 */
static int
ckpt_list(struct cgrun_ckpt *c, uint64_t max_step, int prune,
    uint64_t **out)
{
	struct dirent *de;
	uint64_t *steps = NULL, *n, step;
	size_t count = 0, cap = 0;
	DIR *d;
	int fd;

	if ((fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))
	    == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL && count < CKPT_MAX_STEPS) {
		if (prune && ckpt_tmp_stale(c, de->d_name))
			(void)unlinkat(c->dirfd, de->d_name, 0);
		if (ckpt_parse_file(c, de->d_name, &step) == -1 ||
		    step > max_step)
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 16;
			if ((n = realloc(steps, cap * sizeof(*n))) == NULL) {
				free(steps);
				closedir(d);
				errno = ENOMEM;
				return -1;
			}
			steps = n;
		}
		steps[count++] = step;
	}
	closedir(d);
	if (count > 0)
		qsort(steps, count, sizeof(*steps), ckpt_cmp_desc);
	*out = steps;
	return (int)count;
}

/*
 * Remove all but the newest `keep` files and stale temporary files; never
 * the step just saved (after a rollback, newer steps of an abandoned
 * attempt may still be on disk).
 */
static void
ckpt_prune(struct cgrun_ckpt *c, uint64_t saved)
{
	char file[CGRUN_CKPT_MAX_NAME + 64];
	uint64_t *steps = NULL;
	int i, n;

	if ((n = ckpt_list(c, CGRUN_CKPT_NEWEST, 1, &steps)) <= 0)
		return;
	for (i = c->keep; i < n; i++)
		if (steps[i] != saved &&
		    ckpt_file(c, steps[i], file, sizeof(file)) == 0)
			(void)unlinkat(c->dirfd, file, 0);
	free(steps);
}

/* Whether iov holds iovcnt (>= 0) pieces, none of them NULL with bytes. */
static int
ckpt_iov_ok(const struct iovec *iov, int iovcnt)
{
	int i;

	if (iovcnt < 0 || (iovcnt > 0 && iov == NULL))
		return 0;
	for (i = 0; i < iovcnt; i++)
		if (iov[i].iov_base == NULL && iov[i].iov_len > 0)
			return 0;
	return 1;
}

/* Save a payload in pieces as checkpoint step, atomically. */
CGRUN_EXPORT int
cgrun_ckpt_savev(struct cgrun_ckpt *c, uint64_t step, const struct iovec *iov,
    int iovcnt, char *err)
{
	char tmp[CGRUN_CKPT_MAX_NAME + 320], file[CGRUN_CKPT_MAX_NAME + 64];
	struct ckpt_hdr h = { step, 0, 0 };
	int i;

	if (c == NULL) {
		errno = EINVAL;
		cgrun_seterr(err, "checkpoint save: no checkpoint set (NULL)");
		return -1;
	}
	if (!ckpt_iov_ok(iov, iovcnt)) {
		errno = EINVAL;
		cgrun_seterr(err, "checkpoint save: bad iovec (NULL data with "
		    "a length, or a negative count)");
		return -1;
	}
	for (i = 0; i < iovcnt; i++) {
		h.crc = ckpt_crc(h.crc, iov[i].iov_base, iov[i].iov_len);
		h.len += iov[i].iov_len;
	}
	if (ckpt_file(c, step, file, sizeof(file)) == -1)
		return -1;
	ckpt_tmpname(c, step, tmp, sizeof(tmp));
	if (ckpt_write_tmp(c, tmp, &h, iov, iovcnt) == -1) {
		cgrun_seterr(err, "checkpoint %s/%s: write: %s", c->dir, tmp,
		    strerror(errno));
		(void)unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	if (renameat(c->dirfd, tmp, c->dirfd, file) == -1) {
		cgrun_seterr(err, "checkpoint %s/%s: rename: %s", c->dir, file,
		    strerror(errno));
		(void)unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	if (fsync(c->dirfd) == -1) {
		cgrun_seterr(err, "checkpoint directory %s: fsync: %s", c->dir,
		    strerror(errno));
		return -1;
	}
	ckpt_prune(c, step);
	return 0;
}

/* Save len bytes as checkpoint step, atomically. */
CGRUN_EXPORT int
cgrun_ckpt_save(struct cgrun_ckpt *c, uint64_t step, const void *data,
    size_t len, char *err)
{
	struct iovec iov;

	iov.iov_base = (void *)(uintptr_t)data;
	iov.iov_len = len;
	return cgrun_ckpt_savev(c, step, &iov, len > 0 ? 1 : 0, err);
}

/* Read exactly len bytes (fewer only at end of file); bytes read or -1. */
static ssize_t
ckpt_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * Verify the payload of an open file against h: into a malloc'd *data
 * if data is not NULL, else in chunks.  1 valid, 0 invalid, -1 error.
 */
static int
ckpt_read_payload(int fd, const struct ckpt_hdr *h, void **data)
{
	uint64_t left = h->len;
	uint32_t crc = 0;
	char *buf, *p;
	size_t want;
	ssize_t n;
	char extra;

	if (h->len > SIZE_MAX - 1)
		return 0;
	buf = malloc(data != NULL ? (size_t)h->len + 1 : CKPT_CHUNK);
	if (buf == NULL)
		return -1;
	for (p = buf; left > 0; left -= (uint64_t)n) {
		want = left < CKPT_CHUNK ? (size_t)left : CKPT_CHUNK;
		if ((n = ckpt_read_full(fd, p, want)) <= 0 ||
		    (size_t)n != want) {
			free(buf);
			return n == -1 ? -1 : 0;
		}
		crc = ckpt_crc(crc, p, want);
		if (data != NULL)
			p += want;
	}
	if (crc != h->crc || ckpt_read_full(fd, &extra, 1) != 0) {
		free(buf);	/* checksum mismatch or trailing bytes */
		return 0;
	}
	if (data != NULL) {
		*p = '\0';
		*data = buf;
	} else
		free(buf);
	return 1;
}

/*
 * Whether the file holds exactly the payload length its header claims, so
 * a claimed length never sizes an allocation beyond the file (a torn or
 * forged header may claim up to 2^64 - 1 bytes).
 */
static int
ckpt_len_fits(int fd, const struct ckpt_hdr *h)
{
	struct stat st;

	if (fstat(fd, &st) == -1 || st.st_size < CKPT_HDRLEN)
		return 0;
	return h->len == (uint64_t)st.st_size - CKPT_HDRLEN;
}

/* Check step's file; 1 complete (payload in *data if wanted), 0 not, -1 error. */
static int
ckpt_read(struct cgrun_ckpt *c, uint64_t step, void **data, size_t *len)
{
	char file[CGRUN_CKPT_MAX_NAME + 64];
	unsigned char hdr[CKPT_HDRLEN];
	struct ckpt_hdr h;
	int fd, rc;

	if (ckpt_file(c, step, file, sizeof(file)) == -1)
		return -1;
	if ((fd = openat(c->dirfd, file, O_RDONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;	/* pruned meanwhile */
	if (ckpt_read_full(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr) ||
	    ckpt_hdr_decode(hdr, &h) == -1 || h.step != step ||
	    !ckpt_len_fits(fd, &h)) {
		close(fd);
		return 0;
	}
	rc = ckpt_read_payload(fd, &h, data);
	close(fd);
	if (rc == 1 && len != NULL)
		*len = (size_t)h.len;
	return rc;
}

/* Find (and with data, load) the newest complete step <= max_step. */
static int
ckpt_find(struct cgrun_ckpt *c, uint64_t max_step, uint64_t *step,
    void **data, size_t *len, char *err)
{
	uint64_t *steps = NULL;
	int i, n, rc = 0;

	if ((n = ckpt_list(c, max_step, 0, &steps)) == -1) {
		cgrun_seterr(err, "checkpoint directory %s: %s", c->dir,
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		if ((rc = ckpt_read(c, steps[i], data, len)) == 1)
			*step = steps[i];
		else if (rc == -1)
			cgrun_seterr(err, "checkpoint %s step %llu: %s", c->dir,
			    (unsigned long long)steps[i], strerror(errno));
	}
	free(steps);
	return rc;
}

/* A NULL handle or result pointer: -1 with EINVAL and a message. */
static int
ckpt_bad_args(char *err)
{
	errno = EINVAL;
	cgrun_seterr(err, "checkpoint: bad arguments (NULL handle or result)");
	return -1;
}

/* Find the newest complete checkpoint with step <= max_step. */
CGRUN_EXPORT int
cgrun_ckpt_newest(struct cgrun_ckpt *c, uint64_t max_step, uint64_t *step,
    char *err)
{
	if (c == NULL || step == NULL)
		return ckpt_bad_args(err);
	return ckpt_find(c, max_step, step, NULL, NULL, err);
}

/* Load the newest complete checkpoint with step <= max_step. */
CGRUN_EXPORT int
cgrun_ckpt_load(struct cgrun_ckpt *c, uint64_t max_step, uint64_t *step,
    void **data, size_t *len, char *err)
{
	void *buf = NULL;
	size_t n = 0;
	int rc;

	if (c == NULL || step == NULL || data == NULL || len == NULL)
		return ckpt_bad_args(err);
	rc = ckpt_find(c, max_step, step, &buf, &n, err);
	if (rc == 1) {
		*data = buf;
		*len = n;
	}
	return rc;
}
