#!/bin/sh
# The etcd-v3 backend with etcd's authentication enabled: the right user
# and password (--rdzv-conf user=, password_file=) run a job; no
# credentials, or a wrong password, fail at once with 75 and etcd's words.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
etcd_up 1
E="$ETCDCTL --endpoints=$ETCD_ENDPOINTS"
$E user add root --new-user-password=s3cret >/dev/null &&
	$E role add root >/dev/null && $E user grant-role root root >/dev/null &&
	$E auth enable >/dev/null || fail "cannot enable etcd auth"
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
echo s3cret >"$T/pw"
echo wrong >"$T/bad"
c="--nnodes=1:2 --nproc-per-node=1 --no-python $T/w.sh"
agent good 127.0.0.2 --rdzv-id=auth --rdzv-conf="$ETCD_CONF,last_call_timeout=0.2,user=root,password_file=$T/pw" $c
expect_exit good 30 0
[ -f "$OUT/env.0.1.0" ] || { cat "$T/good.log"; fail "no worker ran"; }
agent none 127.0.0.2 --rdzv-id=auth2 --rdzv-conf="$ETCD_CONF" $c
expect_exit none 10 75
expect_in none "etcd has authentication enabled"
agent bad 127.0.0.2 --rdzv-id=auth3 --rdzv-conf="$ETCD_CONF,user=root,password_file=$T/bad" $c
expect_exit bad 10 75
expect_in bad "etcd refused user root: etcdserver: authentication failed"
grep -q s3cret "$T"/*.log && fail "a log shows the password"
tail -n 1 "$T/none.log" "$T/bad.log"
echo "ok: etcd auth: right password runs, none or wrong fails with 75"
