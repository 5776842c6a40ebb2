#!/usr/bin/env python3
"""Starts one independent HTTP server implementation for the interop matrix, on loopback.

Usage: launch.py KIND WORKDIR HTML CERTS

KIND is nginx, apache, caddy, h2o, lighttpd, uvicorn or go. Each serves the same site from its
own configuration (written under WORKDIR), the way a deployment of it would:
  HTML (static)            /small /medium /large /gzip/text /bighead, with the server's own
                           Range, ETag/Last-Modified and 304 handling
  /gzip/*                  compressed on the fly with every coding the server offers
  /bighead                 the static file with about 60 KiB of response fields
  /upload, /blob/*         the server's reverse proxy in front of Tests/Servers/stream_server.py
                           (uvicorn and Go answer them in their own handlers)
  /digest/* (Apache)       HTML's files behind mod_auth_digest (RFC 7616, MD5, qop auth): user
                           DIGEST_USER, password DIGEST_PASSWORD, realm DIGEST_REALM
Listeners: `http`; `https` with two certificates chosen by SNI (localhost and other.test, from
CERTS/make_certs.sh), TLS 1.2 and 1.3, offering h2 by ALPN where the server can; `mtls` requiring a client certificate from the test CA
(null where the server cannot); `closing`, where the server closes each connection after
`close_after` requests (its own keep-alive limit, or a handler's `Connection: close`).

Prints one JSON line: the ports, the server's version, and `missing` (with the reason) when the
server is not installed; then runs until stdin closes or the test process goes away.
"""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVERS = os.path.join(os.path.dirname(HERE), "Servers")
CLOSE_AFTER = 3
# About 60 KiB of response fields: 100 fields of 600 bytes.
BIG_FIELDS = [(f"X-Fill-{i:03d}", ("%03d" % i) * 200) for i in range(100)]
DIGEST_USER, DIGEST_PASSWORD, DIGEST_REALM = "alice", "wonderland", "courier-interop"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def ours(port, root):
    """Whether `port` accepts and its listener is the server's (`root`'s process or one of its
    children). Servers launched side by side pick free ports at the same time; one that lost a
    port to another exits, and accepting alone then vouched for the other server's listener."""
    if not accepts(port):
        return False
    try:
        listed = subprocess.run(["ss", "-Hltnp", "sport = :%d" % port], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return True  # (no ss: accepting is all there is to go on)
    for pid in (int(p) for p in __import__("re").findall(r"pid=(\d+)", listed)):
        for _ in range(6):
            if pid == root:
                return True
            try:
                with open("/proc/%d/stat" % pid) as f:
                    pid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
    return False


def version_of(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=20)
        text = (out.stdout + out.stderr).strip().splitlines()
        return text[0] if text else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


class Site:
    """What every configuration needs: paths, ports and the backend."""

    def __init__(self, work, html, certs):
        self.work = work
        self.html = html
        self.certs = certs
        self.http, self.https, self.mtls, self.closing = (free_port() for _ in range(4))
        self.backend = None

    def cert(self, name):
        return os.path.join(self.certs, name)

    def path(self, name):
        return os.path.join(self.work, name)

    def as_json(self):
        """What the servers written here (uvicorn's app, the Go server) take as their argument."""
        return json.dumps({"html": self.html, "http": self.http, "https": self.https, "mtls": self.mtls,
                           "closing": self.closing, "close_after": CLOSE_AFTER, "certs": self.certs,
                           "fields": BIG_FIELDS})


def start_backend(site):
    """stream_server.py: uploads hashed, generated and chunked downloads (behind the proxies)."""
    process = subprocess.Popen([sys.executable, os.path.join(SERVERS, "stream_server.py")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    site.backend = int(process.stdout.readline().split()[0])
    return process


# ---------------------------------------------------------------------------------------------
# nginx

def nginx(site):
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(binary):
        return None, "nginx is not installed (Debian: nginx)"
    brotli = "/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so"
    fields = "".join(f'add_header {n} "{v}";\n' for n, v in BIG_FIELDS)
    common = f"""
        root {site.html};
        location /gzip/ {{
            gzip on; gzip_types *; gzip_min_length 0;
            {"brotli on; brotli_types *; brotli_min_length 0;" if os.path.exists(brotli) else ""}
        }}
        location = /bighead {{ {fields} }}
        location /upload {{ proxy_pass http://127.0.0.1:{site.backend}; proxy_http_version 1.1; client_max_body_size 64m; }}
        location /blob/ {{ proxy_pass http://127.0.0.1:{site.backend}; proxy_http_version 1.1; proxy_buffering off; }}
    """
    tls = f"ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:interop:1m; ssl_session_tickets on;"
    config = f"""
{"user root root;" if os.getuid() == 0 else ""}
{f"load_module {brotli};" if os.path.exists(brotli) else ""}
worker_processes 1;
daemon off;
master_process off;
pid {site.path("nginx.pid")};
error_log {site.path("error.log")} warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    default_type application/octet-stream;
    client_body_temp_path {site.path("body")};
    proxy_temp_path {site.path("proxy")};
    fastcgi_temp_path {site.path("fastcgi")};
    uwsgi_temp_path {site.path("uwsgi")};
    scgi_temp_path {site.path("scgi")};
    keepalive_requests 100000;
    server {{ listen 127.0.0.1:{site.http}; {common} }}
    server {{ listen 127.0.0.1:{site.closing}; keepalive_requests {CLOSE_AFTER}; {common} }}
    server {{ listen 127.0.0.1:{site.https} ssl http2; server_name localhost; {tls}
             ssl_certificate {site.cert("server-chain.pem")}; ssl_certificate_key {site.cert("server.key")}; {common} }}
    server {{ listen 127.0.0.1:{site.https} ssl http2; server_name other.test; {tls}
             ssl_certificate {site.cert("other-chain.pem")}; ssl_certificate_key {site.cert("other.key")}; {common} }}
    server {{ listen 127.0.0.1:{site.mtls} ssl http2; {tls}
             ssl_certificate {site.cert("server-chain.pem")}; ssl_certificate_key {site.cert("server.key")};
             ssl_verify_client on; ssl_client_certificate {site.cert("ca.pem")}; {common} }}
}}
"""
    write(site.path("nginx.conf"), config)
    return [binary, "-c", site.path("nginx.conf"), "-p", site.work, "-e", site.path("error.log")], None


# ---------------------------------------------------------------------------------------------
# Apache httpd

def apache(site):
    binary = "/usr/sbin/apache2"
    if not os.path.exists(binary):
        return None, "Apache httpd is not installed (Debian: apache2)"
    modules = ["mpm_event", "authz_core", "mime", "dir", "headers", "deflate", "brotli", "filter", "ssl",
               "socache_shmcb", "proxy", "proxy_http", "setenvif", "http2", "auth_digest", "authn_core",
               "authn_file", "authz_user"]
    users = site.path("digest.users")
    secret = hashlib.md5(f"{DIGEST_USER}:{DIGEST_REALM}:{DIGEST_PASSWORD}".encode()).hexdigest()
    write(users, f"{DIGEST_USER}:{DIGEST_REALM}:{secret}\n")
    os.chmod(users, 0o644)
    loads = "".join(f"LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so\n" for m in modules)
    fields = "".join(f'Header always set {n} "{v}"\n' for n, v in BIG_FIELDS)
    common = f"""
    DocumentRoot "{site.html}"
    <Directory "{site.html}">
        Require all granted
    </Directory>
    <Location "/gzip/">
        SetOutputFilter BROTLI_COMPRESS;DEFLATE
    </Location>
    <Location "/bighead">
        {fields}
    </Location>
    <Location "/digest/">
        AuthType Digest
        AuthName "{DIGEST_REALM}"
        AuthDigestDomain "/digest/"
        AuthDigestProvider file
        AuthUserFile "{users}"
        Require valid-user
    </Location>
    ProxyPass "/upload" "http://127.0.0.1:{site.backend}/upload"
    ProxyPass "/blob/" "http://127.0.0.1:{site.backend}/blob/" flushpackets=on
    """
    tls = f"""
    SSLEngine on
    SSLProtocol -all +TLSv1.2 +TLSv1.3
    Protocols h2 http/1.1
    """
    user = "User www-data\nGroup www-data\n" if os.getuid() == 0 else ""
    config = f"""
ServerRoot "{site.work}"
{loads}
{user}
PidFile "{site.path("apache.pid")}"
ErrorLog "{site.path("error.log")}"
LogLevel warn
Mutex file:{site.work} default
DefaultRuntimeDir "{site.work}"
ServerName localhost
TypesConfig /etc/mime.types
DefaultType application/octet-stream
KeepAlive On
MaxKeepAliveRequests 100000
KeepAliveTimeout 60
LimitRequestBody 0
StartServers 1
ServerLimit 1
ThreadsPerChild 64
MaxRequestWorkers 64
SSLSessionCache "shmcb:{site.path("ssl_scache")}(512000)"
SSLRandomSeed startup builtin
Listen 127.0.0.1:{site.http}
Listen 127.0.0.1:{site.closing}
Listen 127.0.0.1:{site.https} https
Listen 127.0.0.1:{site.mtls} https
<VirtualHost 127.0.0.1:{site.http}>
{common}
</VirtualHost>
<VirtualHost 127.0.0.1:{site.closing}>
MaxKeepAliveRequests {CLOSE_AFTER}
{common}
</VirtualHost>
<VirtualHost 127.0.0.1:{site.https}>
ServerName localhost
{tls}
SSLCertificateFile "{site.cert("server-chain.pem")}"
SSLCertificateKeyFile "{site.cert("server.key")}"
{common}
</VirtualHost>
<VirtualHost 127.0.0.1:{site.https}>
ServerName other.test
{tls}
SSLCertificateFile "{site.cert("other-chain.pem")}"
SSLCertificateKeyFile "{site.cert("other.key")}"
{common}
</VirtualHost>
<VirtualHost 127.0.0.1:{site.mtls}>
ServerName localhost
{tls}
SSLCertificateFile "{site.cert("server-chain.pem")}"
SSLCertificateKeyFile "{site.cert("server.key")}"
SSLVerifyClient require
SSLCACertificateFile "{site.cert("ca.pem")}"
{common}
</VirtualHost>
"""
    write(site.path("apache.conf"), config)
    return [binary, "-f", site.path("apache.conf"), "-DFOREGROUND"], None


# ---------------------------------------------------------------------------------------------
# Caddy (Go's net/http and crypto/tls)

def caddy(site):
    binary = shutil.which("caddy")
    if not binary:
        return None, "Caddy is not installed (Debian: caddy)"
    fields = "".join(f'\t\theader {n} "{v}"\n' for n, v in BIG_FIELDS)
    config = f"""
{{
    admin off
    auto_https off
    storage file_system {site.path("data")}
    log {{
        output discard
    }}
}}
(site) {{
    root * {site.html}
    encode /gzip/* zstd gzip {{
        minimum_length 0
    }}
    handle /bighead {{
{fields}
        file_server
    }}
    handle /upload* {{
        reverse_proxy 127.0.0.1:{site.backend}
    }}
    handle /blob/* {{
        reverse_proxy 127.0.0.1:{site.backend} {{
            flush_interval -1
        }}
    }}
    handle {{
        file_server
    }}
}}
http://:{site.http} {{
    bind 127.0.0.1
    import site
}}
http://:{site.closing} {{
    bind 127.0.0.1
    header Connection close
    import site
}}
https://localhost:{site.https} {{
    bind 127.0.0.1
    tls {site.cert("server-chain.pem")} {site.cert("server.key")} {{
        protocols tls1.2 tls1.3
    }}
    import site
}}
https://other.test:{site.https} {{
    bind 127.0.0.1
    tls {site.cert("other-chain.pem")} {site.cert("other.key")} {{
        protocols tls1.2 tls1.3
    }}
    import site
}}
https://localhost:{site.mtls} {{
    bind 127.0.0.1
    tls {site.cert("server-chain.pem")} {site.cert("server.key")} {{
        protocols tls1.2 tls1.3
        client_auth {{
            mode require_and_verify
            trusted_ca_cert_file {site.cert("ca.pem")}
        }}
    }}
    import site
}}
"""
    write(site.path("Caddyfile"), config)
    return [binary, "run", "--config", site.path("Caddyfile"), "--adapter", "caddyfile"], None


# ---------------------------------------------------------------------------------------------
# h2o

def h2o(site):
    binary = shutil.which("h2o")
    if not binary:
        return None, "h2o is not installed (Debian: h2o)"
    # (h2o 2.2 takes one field per header.add; its YAML reader keeps repeated keys.)
    fields = "".join(f'        header.add: "{n}: {v}"\n' for n, v in BIG_FIELDS)

    def paths(extra=""):
        return f"""
    paths:
      /bighead:
{fields}
        file.file: {site.html}/bighead
      /upload:
        proxy.reverse.url: http://127.0.0.1:{site.backend}/upload
      /blob:
        proxy.reverse.url: http://127.0.0.1:{site.backend}/blob
      /gzip:
        compress: [gzip, br]
        compress-minimum-size: 1
        file.mime.setdefaulttype: text/plain
        file.dir: {site.html}/gzip
      /:
        file.dir: {site.html}
{extra}"""

    def tls(cert, key):
        return f"""
      ssl:
        certificate-file: {site.cert(cert)}
        key-file: {site.cert(key)}
        minimum-version: TLSv1.2
        ocsp-update-interval: 0"""

    config = f"""
pid-file: {site.path("h2o.pid")}
error-log: {site.path("error.log")}
{"user: root" if os.getuid() == 0 else ""}
num-threads: 2
http2-reprioritize-blocking-assets: OFF
hosts:
  "localhost:{site.https}":
    listen:
      host: 127.0.0.1
      port: {site.https}{tls("server-chain.pem", "server.key")}
{paths()}
  "other.test:{site.https}":
    listen:
      host: 127.0.0.1
      port: {site.https}{tls("other-chain.pem", "other.key")}
{paths()}
  "127.0.0.1:{site.http}":
    listen:
      host: 127.0.0.1
      port: {site.http}
{paths()}
"""
    write(site.path("h2o.conf"), config)
    # h2o 2.2 verifies no client certificates, has no per-connection request limit and refuses to
    # set Connection.
    site.mtls = None
    site.closing = None
    return [binary, "-c", site.path("h2o.conf")], None


# ---------------------------------------------------------------------------------------------
# lighttpd

def lighttpd(site):
    binary = "/usr/sbin/lighttpd"
    if not os.path.exists(binary):
        return None, "lighttpd is not installed (Debian: lighttpd)"
    modules = ["mod_openssl", "mod_proxy", "mod_setenv"]
    deflate = os.path.exists("/usr/lib/lighttpd/mod_deflate.so")
    if deflate:
        modules.append("mod_deflate")
    fields = ", ".join(f'"{n}" => "{v}"' for n, v in BIG_FIELDS)
    tls = f'ssl.engine = "enable"\n  ssl.openssl.ssl-conf-cmd = ("MinProtocol" => "TLSv1.2")\n'
    config = f"""
server.modules = ({", ".join(f'"{m}"' for m in modules)})
server.document-root = "{site.html}"
server.bind = "127.0.0.1"
server.port = {site.http}
server.pid-file = "{site.path("lighttpd.pid")}"
server.errorlog = "{site.path("error.log")}"
server.max-keep-alive-requests = 100000
server.max-keep-alive-idle = 60
server.stream-response-body = 2
server.stream-request-body = 2
server.max-request-size = 65536
mimetype.assign = (".txt" => "text/plain", "" => "application/octet-stream")
{'deflate.mimetypes = ("application/octet-stream", "text/plain")' if deflate else ""}
{'deflate.allowed-encodings = ("brotli", "gzip", "deflate", "zstd")' if deflate else ""}
$HTTP["url"] !~ "^/gzip/" {{
  {'deflate.mimetypes = ()' if deflate else ""}
}}
$HTTP["url"] == "/bighead" {{
  setenv.add-response-header = ({fields})
}}
proxy.server = ( "/upload" => (( "host" => "127.0.0.1", "port" => {site.backend} )),
                 "/blob/" => (( "host" => "127.0.0.1", "port" => {site.backend} )) )
$SERVER["socket"] == "127.0.0.1:{site.closing}" {{
  server.max-keep-alive-requests = {CLOSE_AFTER}
}}
$SERVER["socket"] == "127.0.0.1:{site.https}" {{
  {tls}
  ssl.pemfile = "{site.cert("server-chain.pem")}"
  ssl.privkey = "{site.cert("server.key")}"
  $HTTP["host"] == "other.test" {{
    ssl.pemfile = "{site.cert("other-chain.pem")}"
    ssl.privkey = "{site.cert("other.key")}"
  }}
}}
$SERVER["socket"] == "127.0.0.1:{site.mtls}" {{
  {tls}
  ssl.pemfile = "{site.cert("server-chain.pem")}"
  ssl.privkey = "{site.cert("server.key")}"
  ssl.ca-file = "{site.cert("ca.pem")}"
  ssl.verifyclient.activate = "enable"
  ssl.verifyclient.enforce = "enable"
}}
"""
    write(site.path("lighttpd.conf"), config)
    return [binary, "-D", "-f", site.path("lighttpd.conf")], None


# ---------------------------------------------------------------------------------------------
# uvicorn (an ASGI application on Python's asyncio and ssl)

def uvicorn(site):
    python = os.environ.get("COURIER_INTEROP_PYTHON", "")
    if not python or not os.path.exists(python):
        return None, "no Python with uvicorn and starlette (make test-deps makes .build/interop-venv)"
    check = subprocess.run([python, "-c", "import uvicorn, starlette"], capture_output=True)
    if check.returncode != 0:
        return None, "uvicorn or starlette missing from " + python
    return [python, os.path.join(HERE, "asgi_app.py"), site.as_json()], None


# ---------------------------------------------------------------------------------------------
# Go net/http

def go(site):
    binary = os.environ.get("COURIER_INTEROP_GO_SERVER", "")
    if not binary or not os.path.exists(binary):
        return None, "the Go server is not built (make test-deps builds it with Debian's golang-go)"
    return [binary, site.as_json()], None


KINDS = {"nginx": nginx, "apache": apache, "caddy": caddy, "h2o": h2o, "lighttpd": lighttpd,
         "uvicorn": uvicorn, "go": go}
VERSIONS = {"nginx": ["nginx", "-v"], "apache": ["/usr/sbin/apache2", "-v"], "caddy": ["caddy", "version"],
            "h2o": ["h2o", "--version"], "lighttpd": ["/usr/sbin/lighttpd", "-v"]}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def stop(process):
    if process and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


def main():
    kind, work, html, certs = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    backend = None
    server = None

    def finish(*_):
        stop(server)
        stop(backend)
        os._exit(0)

    signal.signal(signal.SIGTERM, finish)
    for attempt in range(5):
        site = Site(work, html, certs)
        stop(backend)
        backend = start_backend(site)
        command, missing = KINDS[kind](site)
        if command is None:
            print(json.dumps({"missing": missing}), flush=True)
            finish()
        log = open(site.path("server.out"), "ab")
        server = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL, cwd=work)
        ports = [p for p in (site.http, site.https, site.mtls, site.closing) if p]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and server.poll() is None and not all(ours(p, server.pid) for p in ports):
            time.sleep(0.05)
        if server.poll() is None and all(ours(p, server.pid) for p in ports):
            version = version_of(VERSIONS[kind]) if kind in VERSIONS else ""
            if kind == "uvicorn":
                version = version_of([command[0], "-c", "import uvicorn, starlette; print('uvicorn', uvicorn.__version__, '+ starlette', starlette.__version__)"])
            if kind == "go":
                version = version_of(["go", "version"])
            print(json.dumps({"http": site.http, "https": site.https, "mtls": site.mtls, "closing": site.closing,
                              "close_after": CLOSE_AFTER, "version": version}), flush=True)
            break
        stop(server)
        server = None
    else:
        tail = ""
        try:
            with open(os.path.join(work, "server.out"), "rb") as f:
                tail = f.read()[-2000:].decode("utf-8", "replace")
            with open(os.path.join(work, "error.log"), "rb") as f:
                tail += f.read()[-2000:].decode("utf-8", "replace")
        except OSError:
            pass
        print(json.dumps({"failed": f"{kind} did not start: {tail}"}), flush=True)
        finish()
    # Until the test process closes our stdin (it exits, however it ends).
    try:
        sys.stdin.read()
    except (OSError, ValueError):
        pass
    finish()


if __name__ == "__main__":
    main()
