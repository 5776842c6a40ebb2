#!/bin/sh
# Starts or stops a private nginx on 127.0.0.1 for the demo and the benchmarks.
#
#   nginx.sh start DIR   serve DIR/html on a free port; prints the port
#   nginx.sh stop DIR    stop it
#
# The configuration favours a client benchmark: access logging off, unlimited keep-alive
# requests, enough worker connections for 10,000 idle clients, and one worker per core.
# NGINX_WORKERS sets the worker count, NGINX_CPU pins nginx to one CPU (taskset).
set -eu
command=$1
dir=$(cd "$2" && pwd)

case "$command" in
start)
    mkdir -p "$dir/html" "$dir/tmp"
    user_line=""
    [ "$(id -u)" = 0 ] && user_line="user root root;"
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        cat > "$dir/nginx.conf" <<CONF
$user_line
worker_processes ${NGINX_WORKERS:-auto};
worker_rlimit_nofile 40000;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 20000; multi_accept on; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    types { application/json json; text/plain txt; }
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    server {
        listen 127.0.0.1:$port backlog=4096;
        root $dir/html;
        location /gzip/ { gzip on; gzip_types *; gzip_min_length 0; }
        # For the cache scenarios: fresh for an hour, always revalidated, never stored.
        location /fresh/ { expires 1h; }
        location /revalidate/ { add_header Cache-Control no-cache; }
        location /nostore/ { add_header Cache-Control no-store; }
    }
    ${NGINX_EXTRA_SERVER:-}
}
CONF
        pin=""
        [ -n "${NGINX_CPU:-}" ] && command -v taskset >/dev/null && pin="taskset -c $NGINX_CPU"
        if $pin nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log" 2>/dev/null; then
            echo "$port"
            exit 0
        fi
    done
    echo "nginx.sh: nginx did not start, see $dir/error.log" >&2
    exit 1
    ;;
stop)
    [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
    ;;
*)
    echo "usage: nginx.sh start|stop DIR" >&2
    exit 2
    ;;
esac
