#!/bin/sh
# The etcd-v3 backend against an etcd cluster that speaks only HTTPS and
# wants client certificates (--client-cert-auth): with ca_cert, ssl_cert
# and ssl_cert_key a 2-node job runs (members given as https://... and as
# host:port with protocol=https); without the CA, or without a client
# certificate, the agent exits 75 within read_timeout naming the TLS error.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
CGRUN_ETCD_TLS=1 etcd_up 3
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
tls="ca_cert=$ECL/tls/ca.pem,ssl_cert=$ECL/tls/client.pem,ssl_cert_key=$ECL/tls/client.key"
c2="--nnodes=2 --nproc-per-node=1 --no-python $T/w.sh"
agent a2 127.0.0.2 --rdzv-id=tls --rdzv-conf="$ETCD_CONF,$tls" $c2
plain=$(echo "$ETCD_ENDPOINTS" | sed 's|https://||g')
"$CGRUN" -v --rdzv-backend=etcd-v3 --rdzv-endpoint="$plain" --local-addr=127.0.0.3 \
	--rdzv-id=tls --rdzv-conf="$ETCD_CONF,$tls,protocol=https" $c2 >"$T/a3.log" 2>&1
rc=$?
[ "$rc" = 0 ] || { tail -n 20 "$T/a3.log"; fail "protocol=https agent exited $rc"; }
expect_exit a2 30 0
[ "$(ls "$OUT"/env.0.2.* | wc -l)" = 2 ] || fail "workers: $(ls "$OUT")"
[ -z "$(etcd_keys tls)" ] || fail "keys left: $(etcd_keys tls)"
echo "ok: a job over HTTPS with client certificates"

# Each try gets 2 s: a TLS handshake refused for its certificate is quick
# on a quiet machine, but a loaded one (the suite on 2 cores) can take
# longer than 0.5 s for it, and then the last error is a time-out, not
# the certificate's.
fast="$ETCD_CONF,read_timeout=6,request_timeout=2"
agent noca 127.0.0.2 --rdzv-id=noca --rdzv-conf="$fast" $c2
expect_exit noca 30 75
expect_in noca "SSL certificate problem"
agent nocert 127.0.0.2 --rdzv-id=nocert --rdzv-conf="$fast,ca_cert=$ECL/tls/ca.pem" $c2
expect_exit nocert 30 75
expect_in nocert "cannot reach the etcd cluster within read_timeout (6 s)"
tail -n 1 "$T/noca.log" "$T/nocert.log"
echo "ok: no CA or no client certificate: 75 with the TLS error"
