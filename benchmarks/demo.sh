#!/bin/sh
# `make demo`: a local nginx, then the courier CLI and the library fetching through the shared queue.
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap '"$here/nginx.sh" stop "$work"; rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/html/pages"
for n in $(seq 1 12); do head -c $((n * 2000)) /dev/zero | tr '\0' 'p' > "$work/html/pages/$n.txt"; done
printf '[{"id":1,"name":"first"},{"id":2,"name":"second"},{"id":3,"name":"third"}]' > "$work/html/items.json"
head -c 300000000 /dev/zero > "$work/html/big.bin"
# nginx.sh serves /fresh/ with an hour's freshness and /revalidate/ with no-cache.
mkdir -p "$work/html/fresh" "$work/html/revalidate"
printf '{"headline":"cached for an hour"}' > "$work/html/fresh/news.json"
printf '0123456789abcdefghij' > "$work/html/fresh/parts.txt"
printf '{"entries":["validated on every use"]}' > "$work/html/revalidate/feed.json"
# A TLS listener speaking HTTP/2 beside the plain one (certificates from the test CA script).
sh "$here/../Tests/Servers/make_certs.sh" "$work/certs" > /dev/null 2>&1
h2_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export NGINX_EXTRA_SERVER="server { listen 127.0.0.1:$h2_port ssl http2; root $work/html; ssl_certificate $work/certs/server-chain.pem; ssl_certificate_key $work/certs/server.key; add_header Strict-Transport-Security max-age=3600; }"
# Starts Tests/Servers/SCRIPT with ARGS and waits for its first line (a port, or "ready"):
# $server is its pid, $first the line's first word.
start_server() {
    name=$1 script=$2
    shift 2
    python3 "$here/../Tests/Servers/$script" "$@" > "$work/$name.out" &
    server=$!
    while [ ! -s "$work/$name.out" ]; do sleep 0.05; done
    first=$(cut -d' ' -f1 "$work/$name.out")
}
port=$("$here/nginx.sh" start "$work")
h2="https://localhost:$h2_port"
base="http://127.0.0.1:$port"
echo "== nginx on $base"
echo
echo "== courier: three URLs in one invocation share one keep-alive connection"
"$bin/courier" -s -o /dev/null -o /dev/null -o /dev/null \
    -w '%{url_effective}: %{http_code}, %{size_download} bytes, new connections: %{num_connects}, %{time_total}s\n' \
    "$base/pages/1.txt" "$base/pages/2.txt" "$base/pages/3.txt"
echo
echo "== courier -Z: six URLs in parallel through the shared queue (--parallel-max 3)"
"$bin/courier" -s -Z --parallel-max 3 -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
    -w '%{url_effective}: %{http_code} in %{time_total}s (queued %{time_queue}s)\n' \
    "$base/pages/4.txt" "$base/pages/5.txt" "$base/pages/6.txt" "$base/pages/7.txt" "$base/pages/8.txt" "$base/pages/9.txt"
echo
echo "== courier: curl's contracts — a glob naming files (-o 'page_#1.txt'), --resolve, curl's meter"
"$bin/courier" -s --output-dir "$work" -o 'page_#1.txt' "$base/pages/[1-3].txt" && ls "$work" | grep '^page_'
"$bin/courier" -s --resolve "demo.test:$port:127.0.0.1" -o /dev/null \
    -w '%{url_effective} through %{remote_ip}: %{http_code}, %{content_type}\n' "http://demo.test:$port/items.json"
"$bin/courier" -o /dev/null "$base/pages/12.txt"
echo
echo "== courier -#: a 300 MB download with a progress bar"
"$bin/courier" -# -o /dev/null -w 'downloaded %{size_download} bytes at %{speed_download} bytes/s\n' "$base/big.bin"
echo
echo "== courier -C -: a download cut short (--limit-rate 20M, -m 1) and resumed where it stopped"
set +e
"$bin/courier" -s --limit-rate 20M -m 1 -o "$work/resumed.bin" -C - "$base/big.bin"; echo "first attempt: exit code $? (curl's 28), $(stat -c %s "$work/resumed.bin") bytes on disk"
set -e
"$bin/courier" -s -C - -o "$work/resumed.bin" -w 'second attempt: %{http_code}, %{size_download} more bytes\n' "$base/big.bin"
cmp -s "$work/resumed.bin" "$work/html/big.bin" && echo "the resumed file is byte for byte the original ($(stat -c %s "$work/resumed.bin") bytes)"
echo
echo "== courier -F: a multipart upload streamed from disk (nginx answers 405 to POST on a static file; -w shows what went out)"
"$bin/courier" -s -o /dev/null -F "note=from the demo" -F "file=@$work/html/items.json" \
    -w 'sent %{size_upload} bytes (head and multipart/form-data body), answered %{http_code}\n' "$base/items.json" || true
echo
echo "== courier --cache-dir: an HTTP cache (RFC 9111) shared by invocations"
for run in first second; do
  echo "-- $run run"
  "$bin/courier" -s --cache-dir "$work/cache" -o /dev/null -o /dev/null \
      -w '%{url_effective}: %{http_code}, cache %{cache_status}, %{time_total}s\n' \
      "$base/fresh/news.json" "$base/revalidate/feed.json"
done
echo "-- byte ranges (RFC 9111 3.4): two parts from nginx, then a range across both and the whole from storage"
for range in 0-9 10- 5-14 ""; do
  "$bin/courier" -s --cache-dir "$work/cache" ${range:+-r "$range"} \
      -w "  <- range ${range:-(whole)}: %{http_code}, cache %{cache_status}\n" "$base/fresh/parts.txt"
done
echo
echo "== courier -f: curl's exit codes"
set +e
"$bin/courier" -sS -f "$base/missing"; echo "exit code $? (curl's 22)"
"$bin/courier" -sS "http://127.0.0.1:1/"; echo "exit code $? (curl's 7)"
set -e
echo
echo "== courier --retry: a server that answers 503 twice, retried with curl's flags (and warnings)"
start_server retry retry_server.py
"$bin/courier" --retry 3 --retry-delay 0.2 -w ' (%{http_code} after the retries)\n' \
    "http://127.0.0.1:$first/flaky/demo?fail=2&mode=503"
kill "$server"
echo
echo "== courier -x: through an HTTP proxy that records what it is asked (the request in absolute form)"
start_server proxy http_proxy.py
proxy="http://127.0.0.1:$first"
"$bin/courier" -s -o /dev/null -x "$proxy" -w '%{http_code} through the proxy; ' "$base/items.json"
"$bin/courier" -s -x "" "$proxy/log"; echo
kill "$server"
echo
echo "== courier --socks5-hostname: through a SOCKS5 proxy with a login (-U), the name resolved by the proxy"
start_server socks socks_proxy.py demo:pw
socks="127.0.0.1:$first"
"$bin/courier" -s -o /dev/null --socks5-hostname "$socks" -U demo:pw -w '%{http_code} through SOCKS5; ' "http://localhost:$port/items.json"
"$bin/courier" -s "http://$socks/log"; echo
"$bin/courier" -sS --socks5-hostname "$socks" "http://localhost:$port/items.json" || echo "without the login: exit code $? (curl's 97)"
kill "$server"
echo
echo "== courier --digest: Digest authentication (RFC 7616) answered once, the 401 dropped (-w counts no redirect)"
start_server digest digest_server.py
digest="http://127.0.0.1:$first"
"$bin/courier" -s --digest -u ann:s3cret -w '  (HTTP %{http_code}, %{num_redirects} redirects)\n' "$digest/sha256/report"
kill "$server"
echo
echo "== courier --hsts: nginx's Strict-Transport-Security noted over https, then http:// to that host goes https://"
"$bin/courier" -s --hsts "$work/hsts.txt" --cacert "$work/certs/ca.pem" -o /dev/null -w '%{url_effective}: %{http_code}\n' "$h2/items.json"
"$bin/courier" -s --hsts "$work/hsts.txt" --cacert "$work/certs/ca.pem" -o /dev/null -w 'asked http://localhost:'"$h2_port"'/items.json, went to %{url_effective}: %{http_code}\n' "http://localhost:$h2_port/items.json"
grep -v '^#' "$work/hsts.txt"
echo
echo "== courier --outbox: POSTs queued while their host is down (exit 75), flushed in order once it is up"
reserve_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
outbox_port=$(reserve_port)
set +e
"$bin/courier" -sS --outbox "$work/outbox" -d 'draft=1' "http://127.0.0.1:$outbox_port/submit"; echo "exit code $? (EX_TEMPFAIL: kept)"
"$bin/courier" -s --outbox "$work/outbox" -X PUT -d 'draft=2' "http://127.0.0.1:$outbox_port/submit"; echo "exit code $?"
echo "waiting in $work/outbox: $(ls "$work/outbox" | grep -c '\.entry$') requests"
set -e
start_server outbox idempotency_server.py "$outbox_port"
"$bin/courier" -s --outbox "$work/outbox" --flush; echo "flush: exit code $? (the outbox is empty)"
echo "the server saw each request once, by its Idempotency-Key: $("$bin/courier" -s "http://127.0.0.1:$outbox_port/keys")"
kill "$server"
echo
echo "== courier --watch-network: the network as the monitor sees it (netlink; COURIER_NETWORK forces a kind),"
echo "   and per host: the kernel's route, then the latest connection attempt"
"$bin/courier" --watch-network -m 0.3 "http://127.0.0.1:$outbox_port/" "http://nowhere.invalid/"
COURIER_NETWORK=cellular "$bin/courier" --watch-network -m 0.2
COURIER_NETWORK=cellular "$bin/courier" --wifi-only --watch-network -m 0.2
echo
echo "== courier --unix-socket: the Docker Engine API's habit, against a server on a socket file"
start_server uds uds_server.py "$work/docker.sock"
"$bin/courier" -s --unix-socket "$work/docker.sock" -w '  (HTTP %{http_code} over the socket)\n' http://localhost/v1.43/containers/json
kill "$server"
echo
echo "== courier -z: only if modified since a time (here the file's own time: 304, nothing written)"
"$bin/courier" -s -z "$work/html/items.json" -w '%{http_code} for -z FILE\n' "$base/items.json"
"$bin/courier" -s -z "-$(date -u -d @0 '+%a, %d %b %Y %H:%M:%S GMT')" -o /dev/null -w '%{http_code} for -z -1970 (it was modified since: not sent)\n' "$base/items.json"
echo
echo "== the library: an engine, callbacks and async/await through the same queue"
"$bin/courier-demo" "$base"
echo
echo "== HTTP/2: twelve requests multiplexed on one TLS connection (ALPN h2), one of them held to 20 kB/s"
"$bin/courier" -s -Z --cacert "$work/certs/ca.pem" -o /dev/null \
    -w '%{url_effective}: HTTP/%{http_version} %{http_code}, new connections: %{num_connects}\n' \
    "$h2/pages/[1-11].txt" --next -s --cacert "$work/certs/ca.pem" --limit-rate 20k -o /dev/null \
    -w '%{url_effective}: HTTP/%{http_version} at %{speed_download} bytes/s\n' "$h2/pages/12.txt"
echo
echo "== Python, as httpx users write it (import courier as httpx): hooks, a streamed body, a mock transport"
PYTHONPATH="$here/../cbindings/python" COURIER_LIBRARY="$bin/libCourierC.so" python3 - "$base" "$h2" "$work/certs/ca.pem" <<'PY'
import asyncio, sys
import courier as httpx

base, h2, ca = sys.argv[1:4]
with httpx.Client(base_url=base, event_hooks={"response": [lambda r: print("  hook:", r.request.method, r.url, r.status_code)]}) as client:
    items = client.get("/items.json").raise_for_status().json()
    print("  items:", [item["name"] for item in items])
    with client.stream("GET", "/pages/3.txt") as response:
        print("  streamed", sum(len(chunk) for chunk in response.iter_bytes(chunk_size=1000)), "bytes in 1,000-byte chunks")
    try:
        client.get("http://127.0.0.1:1/")
    except httpx.ConnectError as error:
        print("  ConnectError for", error.request.url)


async def main():
    async with httpx.AsyncClient(http2=True, verify=ca) as client:
        responses = await asyncio.gather(*(client.get(h2 + "/pages/%d.txt" % n) for n in range(1, 9)))
        print("  AsyncClient(http2=True):", {r.http_version for r in responses}, len(responses), "responses")

asyncio.run(main())
mock = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, json={"mocked": str(request.url)})))
print("  MockTransport:", mock.get("https://api.example/users").json())
with httpx.Engine(base) as engine:
    print("  OCNet's pretty printer:", httpx.pretty_json(engine.get("/items.json").body).replace("\n", "\n  "))
PY

