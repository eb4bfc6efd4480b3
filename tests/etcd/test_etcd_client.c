/*
 * test_etcd_client.c: cgrun's etcd v3 client (etcd_http.c, etcd_kv.c)
 * against a real 3-member etcd cluster on loopback, started for this
 * program by tests/etcd/cluster.sh.  Where etcd cannot run, each case
 * that needs the cluster skips, saying why (the harness' skip reason).
 *
 * Cases: put/range/txn on revisions, leases (grant, keep-alive, revoke:
 * the key goes), a watch sees a put and a delete, failover past a dead
 * member, every member dead (a bounded, named failure), a member that is
 * not etcd, a watch from a revision compacted away, an answer over the
 * size bound, and SIGKILL of the leader between requests.  Without etcd
 * (case "fake"): a stream whose 4 MiB backlog arrives at once is handed
 * out message by message (small ones, and ones just under the bound), and
 * a stream line over the bound ends it naming the member.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "etcd_http.h"
#include "etcd_json.h"
#include "etcd_kv.h"
#include "helper_main.h"

static char cdir[256];		/* the cluster's directory */
static char endpoints[512];	/* its members, comma-separated */
static pid_t owner;		/* the process that started it */
static char no_cluster[512];	/* why there is none, or "" */

/* Skip the running case unless the cluster is up, saying why not. */
#define NEED_CLUSTER() do {						\
	if (endpoints[0] == '\0')					\
		SKIP_CASE("no etcd cluster: %s", no_cluster);		\
} while (0)

struct res {
	int		 n;		/* answers so far */
	int		 failed;
	char		 why[512];
	struct etcd_reply r;	/* a copy of the last answer's scalars */
	char		 val[256];	/* first kv's value */
	size_t		 nkvs;
	int		 deleted;
};

static struct event_base *base;

/* Record one answer. */
static void
rec_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct res *x = arg;

	x->n++;
	if (r == NULL) {
		x->failed = 1;
		snprintf(x->why, sizeof(x->why), "%s", why);
		event_base_loopbreak(base);
		return;
	}
	x->r = *r;
	x->r.kvs = NULL;
	x->nkvs = r->nkvs;
	x->val[0] = '\0';
	if (r->nkvs > 0) {
		snprintf(x->val, sizeof(x->val), "%s", r->kvs[0].value);
		x->deleted = r->kvs[0].deleted;
	}
	event_base_loopbreak(base);
}

/* Run the loop until x has n answers or secs pass; 0 if it has them. */
static int
wait_for(struct res *x, int n, int secs)
{
	time_t end = time(NULL) + secs;

	while (x->n < n && time(NULL) < end) {
		struct timeval tv = { 1, 0 };

		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
	}
	return x->n >= n ? 0 : -1;
}

/* A client of the given members. */
static struct etcd_http *
client(const char *eps, unsigned timeout_ms)
{
	struct etcd_http_conf c;
	char err[256];
	struct etcd_http *h;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(etcd_http_endpoints(eps, &c, err, sizeof(err)), 0);
	c.timeout_ms = timeout_ms;
	c.connect_ms = 1000;
	h = etcd_http_new(base, &c, err, sizeof(err));
	ck_assert_ptr_nonnull(h);
	return h;
}

/* A fresh event base per case. */
static void
setup(void)
{
	base = event_base_new();
}

/* Free it. */
static void
teardown(void)
{
	event_base_free(base);
}

START_TEST(put_range_txn)
{
	struct etcd_http *h;
	struct res a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	int64_t rev;

	NEED_CLUSTER();
	h = client(endpoints, 3000);
	etcd_put(h, "/t/prt/k", "v1", 0, rec_cb, &a);
	ck_assert_int_eq(wait_for(&a, 1, 10), 0);
	ck_assert_msg(!a.failed, "%s", a.why);
	etcd_range_prefix(h, "/t/prt/", rec_cb, &b);
	ck_assert_int_eq(wait_for(&b, 1, 10), 0);
	ck_assert_uint_eq(b.nkvs, 1);
	ck_assert_str_eq(b.val, "v1");
	rev = b.r.revision;
	/* compare on the right revision wins, on a stale one loses */
	etcd_put_if(h, "/t/prt/k", rev, "/t/prt/k", "v2", 0, rec_cb, &c);
	ck_assert_int_eq(wait_for(&c, 1, 10), 0);
	ck_assert_int_eq(c.r.succeeded, 1);
	etcd_put_if(h, "/t/prt/k", rev, "/t/prt/k", "v3", 0, rec_cb, &d);
	ck_assert_int_eq(wait_for(&d, 1, 10), 0);
	ck_assert_int_eq(d.r.succeeded, 0);
	memset(&d, 0, sizeof(d));
	etcd_put_if(h, "/t/prt/new", 0, "/t/prt/new", "x", 0, rec_cb, &d);
	ck_assert_int_eq(wait_for(&d, 1, 10), 0);
	ck_assert_int_eq(d.r.succeeded, 1);
	etcd_http_free(h);
}
END_TEST

START_TEST(lease_keys_go)
{
	struct etcd_http *h;
	struct res g = { 0 }, p = { 0 }, k = { 0 }, v = { 0 }, r = { 0 };

	NEED_CLUSTER();
	h = client(endpoints, 3000);
	etcd_lease_grant(h, 5, rec_cb, &g);
	ck_assert_int_eq(wait_for(&g, 1, 10), 0);
	ck_assert(g.r.lease_id != 0);
	ck_assert_int_eq(g.r.ttl, 5);
	etcd_put(h, "/t/lease/k", "x", g.r.lease_id, rec_cb, &p);
	ck_assert_int_eq(wait_for(&p, 1, 10), 0);
	ck_assert_int_eq(p.r.code, 0);
	etcd_lease_keepalive(h, g.r.lease_id, rec_cb, &k);
	ck_assert_int_eq(wait_for(&k, 1, 10), 0);
	ck_assert_int_eq(k.r.ttl, 5);
	etcd_lease_revoke(h, g.r.lease_id, rec_cb, &v);
	ck_assert_int_eq(wait_for(&v, 1, 10), 0);
	etcd_range_prefix(h, "/t/lease/", rec_cb, &r);
	ck_assert_int_eq(wait_for(&r, 1, 10), 0);
	ck_assert_uint_eq(r.nkvs, 0);
	memset(&k, 0, sizeof(k));
	etcd_lease_keepalive(h, g.r.lease_id, rec_cb, &k);
	ck_assert_int_eq(wait_for(&k, 1, 10), 0);
	ck_assert_int_eq(k.r.ttl, 0);	/* gone: TTL 0 */
	etcd_http_free(h);
}
END_TEST

START_TEST(watch_sees_changes)
{
	struct etcd_http *h;
	struct res w = { 0 }, p = { 0 }, d = { 0 };

	NEED_CLUSTER();
	h = client(endpoints, 3000);
	etcd_watch_prefix(h, "/t/watch/", 0, rec_cb, &w);
	ck_assert_int_eq(wait_for(&w, 1, 10), 0);	/* created */
	ck_assert_int_eq(w.r.created, 1);
	etcd_put(h, "/t/watch/a", "hello", 0, rec_cb, &p);
	ck_assert_int_eq(wait_for(&w, 2, 10), 0);
	ck_assert_str_eq(w.val, "hello");
	ck_assert_int_eq(w.deleted, 0);
	etcd_delete_prefix(h, "/t/watch/", rec_cb, &d);
	ck_assert_int_eq(wait_for(&w, 3, 10), 0);
	ck_assert_int_eq(w.deleted, 1);
	ck_assert_int_eq(w.failed, 0);
	etcd_http_free(h);
}
END_TEST

/* A free loopback port (bound and closed: nobody listens). */
static int
dead_port(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

START_TEST(failover_past_dead_member)
{
	char eps[600];
	struct etcd_http *h;
	struct res a = { 0 };

	NEED_CLUSTER();
	snprintf(eps, sizeof(eps), "127.0.0.1:%d,%s", dead_port(), endpoints);
	h = client(eps, 3000);
	etcd_put(h, "/t/fo/k", "v", 0, rec_cb, &a);
	ck_assert_int_eq(wait_for(&a, 1, 10), 0);
	ck_assert_msg(!a.failed, "%s", a.why);
	ck_assert_int_eq(a.r.code, 0);
	ck_assert_str_ne(etcd_http_member(h), "");
	etcd_http_free(h);
}
END_TEST

START_TEST(all_members_dead)
{
	char eps[128];
	struct etcd_http *h;
	struct res a = { 0 };
	time_t t0 = time(NULL);

	snprintf(eps, sizeof(eps), "127.0.0.1:%d,http://127.0.0.1:%d",
	    dead_port(), dead_port());
	h = client(eps, 1000);
	etcd_put(h, "/t/x", "v", 0, rec_cb, &a);
	ck_assert_int_eq(wait_for(&a, 1, 20), 0);
	ck_assert_int_eq(a.failed, 1);
	ck_assert_msg(strstr(a.why, "no member answered (6 tries over 2 "
	    "member(s))") != NULL, "%s", a.why);
	ck_assert_int_le(time(NULL) - t0, 5);
	etcd_http_free(h);
}
END_TEST

START_TEST(not_etcd)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char eps[64];
	struct etcd_http *h;
	struct res a = { 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	listen(fd, 16);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	if ((pid = fork()) == 0) {	/* answers every request with HTML */
		for (;;) {
			static const char ans[] = "HTTP/1.1 200 OK\r\n"
			    "Content-Length: 13\r\nConnection: close\r\n\r\n"
			    "<html></html>";
			char buf[4096];
			int c = accept(fd, NULL, NULL);

			if (read(c, buf, sizeof(buf)) < 0)
				_exit(1);
			if (write(c, ans, sizeof(ans) - 1) < 0)
				_exit(1);
			close(c);
		}
	}
	close(fd);
	snprintf(eps, sizeof(eps), "127.0.0.1:%d", ntohs(sa.sin_port));
	h = client(eps, 1000);
	etcd_range_prefix(h, "/t/", rec_cb, &a);
	ck_assert_int_eq(wait_for(&a, 1, 10), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(a.failed, 1);
	ck_assert_msg(strstr(a.why, "not an etcd v3 gateway answer") != NULL,
	    "%s", a.why);
	etcd_http_free(h);
}
END_TEST

START_TEST(leader_killed_between_requests)
{
	struct etcd_http *h;
	struct res a = { 0 }, b = { 0 };
	char cmd[1200];

	NEED_CLUSTER();
	h = client(endpoints, 3000);
	etcd_put(h, "/t/lk/k", "before", 0, rec_cb, &a);
	ck_assert_int_eq(wait_for(&a, 1, 10), 0);
	snprintf(cmd, sizeof(cmd), "sh \"$CGRUN_TOP\"/tests/etcd/cluster.sh kill "
	    "%s $(sh \"$CGRUN_TOP\"/tests/etcd/cluster.sh leader %s)", cdir,
	    cdir);
	ck_assert_int_eq(system(cmd), 0);
	etcd_put(h, "/t/lk/k", "after", 0, rec_cb, &b);
	ck_assert_int_eq(wait_for(&b, 1, 20), 0);
	ck_assert_msg(!b.failed, "%s", b.why);
	ck_assert_int_eq(b.r.code, 0);
	etcd_http_free(h);
}
END_TEST

START_TEST(watch_compacted_away)
{
	struct etcd_http *h;
	struct res p = { 0 }, c = { 0 }, w = { 0 };
	char body[64];
	int i;

	NEED_CLUSTER();
	h = client(endpoints, 3000);
	for (i = 0; i < 3; i++) {
		etcd_put(h, "/t/compact/k", "v", 0, rec_cb, &p);
		ck_assert_int_eq(wait_for(&p, i + 1, 10), 0);
	}
	snprintf(body, sizeof(body), "{\"revision\":\"%lld\"}",
	    (long long)p.r.revision);
	etcd_http_post(h, "/v3/kv/compaction", body, 0, rec_cb, &c);
	ck_assert_int_eq(wait_for(&c, 1, 10), 0);
	ck_assert_int_eq(c.r.code, 0);
	etcd_watch_prefix(h, "/t/compact/", 1, rec_cb, &w);
	for (i = 1; i <= 3 && !w.r.canceled && !w.failed; i++)
		wait_for(&w, i, 10);
	ck_assert_int_eq(w.r.canceled, 1);
	ck_assert(w.r.compact_revision > 1);
	etcd_http_free(h);
}
END_TEST

/* A socket listening on a free port of 127.0.0.1; the port in *port. */
static int
loopback_listener(int *port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	listen(fd, 16);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* A server that answers every request with `size` bytes of JSON-ish
 * text; its port, and its pid in *pid. */
static int
big_server(size_t size, pid_t *pid)
{
	int port, fd = loopback_listener(&port);

	if ((*pid = fork()) == 0) {
		static char chunk[65536];
		char hdr[128], buf[4096];
		size_t sent;
		int c;

		memset(chunk, ' ', sizeof(chunk));
		for (;;) {
			if ((c = accept(fd, NULL, NULL)) < 0 ||
			    read(c, buf, sizeof(buf)) < 0)
				_exit(1);
			snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\n"
			    "Content-Length: %zu\r\n\r\n{", size);
			if (write(c, hdr, strlen(hdr)) < 0)
				_exit(1);
			for (sent = 1; sent < size; sent += sizeof(chunk))
				if (write(c, chunk, size - sent < sizeof(chunk) ?
				    size - sent : sizeof(chunk)) < 0)
					break;
			close(c);
		}
	}
	close(fd);
	return port;
}

START_TEST(oversized_answer)
{
	struct etcd_http *h;
	struct res a = { 0 };
	char eps[64];
	pid_t pid;

	snprintf(eps, sizeof(eps), "127.0.0.1:%d", big_server(3 << 20, &pid));
	h = client(eps, 3000);
	etcd_range_prefix(h, "/t/", rec_cb, &a);
	ck_assert_int_eq(wait_for(&a, 1, 20), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(a.failed, 1);
	/* bounded on every try, the member named, then given up */
	ck_assert_msg(strstr(a.why, "no member answered (3 tries over 1 "
	    "member(s))") != NULL, "%s", a.why);
	ck_assert_msg(strstr(a.why, eps) != NULL && strstr(a.why,
	    "answer longer than 1 MiB") != NULL, "%s", a.why);
	etcd_http_free(h);
}
END_TEST

/* A server that answers every request with a stream: `lines` lines of
 * `len` bytes (JSON, then spaces) and, if `tail` > 0, `tail` bytes with no
 * newline; then it closes.  Its port; its pid in *pid. */
static int
stream_server(int lines, size_t len, size_t tail, pid_t *pid)
{
	int port, fd = loopback_listener(&port);

	if ((*pid = fork()) == 0) {
		static const char hdr[] = "HTTP/1.1 200 OK\r\nContent-Type: "
		    "application/json\r\nConnection: close\r\n\r\n";
		static char line[ETCD_BODY_MAX], pad[65536];
		char buf[4096];
		size_t n;
		int c, i;

		memset(pad, ' ', sizeof(pad));
		if ((c = accept(fd, NULL, NULL)) < 0 ||
		    read(c, buf, sizeof(buf)) < 0 ||
		    write(c, hdr, sizeof(hdr) - 1) < 0)
			_exit(1);
		for (i = 0; i < lines; i++) {
			n = (size_t)snprintf(line, sizeof(line), "{\"result\":"
			    "{\"header\":{\"revision\":\"%d\"}}}", i + 1);
			memset(line + n, ' ', len - 1 - n);
			line[len - 1] = '\n';
			if (write(c, line, len) < 0)
				_exit(1);
		}
		for (n = 0; n < tail; n += sizeof(pad))
			if (write(c, pad, tail - n < sizeof(pad) ? tail - n :
			    sizeof(pad)) < 0)
				_exit(1);
		_exit(0);
	}
	close(fd);
	return port;
}

/* Count a stream's messages; the end stops the loop. */
static void
count_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct res *x = arg;

	if (r != NULL) {
		x->n++;
		x->r.revision = r->revision;
		return;
	}
	x->failed = 1;
	snprintf(x->why, sizeof(x->why), "%s", why);
	event_base_loopbreak(base);
}

/* Run the loop until x's stream ended or secs pass. */
static void
wait_end(struct res *x, int secs)
{
	time_t end = time(NULL) + secs;

	while (!x->failed && time(NULL) < end) {
		struct timeval tv = { 1, 0 };

		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
	}
}

/* `lines` messages of `len` bytes written while the client does not read
 * (an agent that was stopped), then the end: each is handed out, in
 * order, and the end is the member closing the stream. */
static void
backlog(int lines, size_t len)
{
	struct timeval tv = { 0, 300000 };
	struct etcd_http *h;
	struct res x = { 0 };
	char eps[64];
	pid_t pid;

	snprintf(eps, sizeof(eps), "127.0.0.1:%d", stream_server(lines, len,
	    0, &pid));
	h = client(eps, 3000);
	etcd_http_post(h, "/v3/watch", "{}", 1, count_cb, &x);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	sleep(1);
	wait_end(&x, 20);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_msg(x.failed && strstr(x.why, "closed the stream") != NULL,
	    "%s", x.why);
	ck_assert_int_eq(x.n, lines);
	ck_assert_int_eq(x.r.revision, lines);
	etcd_http_free(h);
}

START_TEST(stream_backlog)
{
	backlog(4096, 1024);		/* 4 MiB of 1 KiB messages */
}
END_TEST

START_TEST(stream_backlog_big_lines)
{
	backlog(6, ETCD_BODY_MAX - 8000);	/* each just under the bound */
}
END_TEST

START_TEST(stream_line_too_long)
{
	struct etcd_http *h;
	struct res x = { 0 };
	char eps[64];
	pid_t pid;

	/* two messages, then 2 MiB without a newline: the two, then the end,
	 * naming the member and the bound */
	snprintf(eps, sizeof(eps), "127.0.0.1:%d", stream_server(2, 100,
	    2 << 20, &pid));
	h = client(eps, 3000);
	etcd_http_post(h, "/v3/watch", "{}", 1, count_cb, &x);
	wait_end(&x, 20);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(x.n, 2);
	ck_assert_msg(x.failed && strstr(x.why, eps) != NULL &&
	    strstr(x.why, "answer longer than 1 MiB") != NULL, "%s", x.why);
	etcd_http_free(h);
}
END_TEST

/* Stop the cluster when the program (not a forked case) ends. */
static void
cluster_down(void)
{
	char cmd[600];

	if (getpid() != owner)
		return;
	snprintf(cmd, sizeof(cmd), "sh \"$CGRUN_TOP\"/tests/etcd/cluster.sh "
	    "down %s >/dev/null 2>&1; rm -rf %s", cdir, cdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_etcd_client: cannot stop %s\n", cdir);
}

/* The last line of FILE into no_cluster (the harness' reason). */
static void
why_no_cluster(const char *file)
{
	char line[sizeof(no_cluster)];
	FILE *f = fopen(file, "r");

	snprintf(no_cluster, sizeof(no_cluster), "cluster.sh up failed");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (line[0] != '\n' && line[0] != '\0') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(no_cluster, sizeof(no_cluster), "%s",
			    strncmp(line, "SKIP: ", 6) == 0 ? line + 6 : line);
		}
	fclose(f);
}

/* Start the cluster; 0, or -1 with the reason in no_cluster. */
static int
cluster_up(void)
{
	char cmd[1200], line[512];
	FILE *f;

	if (getenv("CGRUN_TOP") == NULL)
		setenv("CGRUN_TOP", ".", 0);
	snprintf(cdir, sizeof(cdir), "%s/cgrun-etcd-client.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(cdir) == NULL) {
		snprintf(no_cluster, sizeof(no_cluster), "mkdtemp %s failed",
		    cdir);
		return -1;
	}
	owner = getpid();
	atexit(cluster_down);
	snprintf(cmd, sizeof(cmd), "sh \"$CGRUN_TOP\"/tests/etcd/cluster.sh up "
	    "%s 3 >%s/up.out 2>&1", cdir, cdir);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "%s/up.out", cdir);
		why_no_cluster(cmd);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "%s/cluster.env", cdir);
	if ((f = fopen(cmd, "r")) == NULL) {
		snprintf(no_cluster, sizeof(no_cluster), "no %s/cluster.env",
		    cdir);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "ETCD_ENDPOINTS=", 15) == 0)
			sscanf(line + 15, "%511[^ \n]", endpoints);
	fclose(f);
	if (endpoints[0] == '\0') {
		snprintf(no_cluster, sizeof(no_cluster), "no ETCD_ENDPOINTS "
		    "in %s/cluster.env", cdir);
		return -1;
	}
	return 0;
}

/* The suite: the cluster's cases skip, saying why, where etcd cannot run. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("etcd_client");
	TCase *tc = tcase_create("cluster");

	signal(SIGPIPE, SIG_IGN);
	cluster_up();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, put_range_txn);
	tcase_add_test(tc, lease_keys_go);
	tcase_add_test(tc, watch_sees_changes);
	tcase_add_test(tc, failover_past_dead_member);
	tcase_add_test(tc, watch_compacted_away);
	tcase_add_test(tc, leader_killed_between_requests);
	suite_add_tcase(s, tc);
	tc = tcase_create("fake");	/* no etcd needed */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, all_members_dead);
	tcase_add_test(tc, not_etcd);
	tcase_add_test(tc, oversized_answer);
	tcase_add_test(tc, stream_backlog);
	tcase_add_test(tc, stream_backlog_big_lines);
	tcase_add_test(tc, stream_line_too_long);
	suite_add_tcase(s, tc);
	return s;
}
