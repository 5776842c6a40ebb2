"""HTTP proxies through the Python binding, against the recording test proxy
(COURIER_TEST_PROXY, Tests/Servers/http_proxy.py) and nginx. Started by the Swift suite like
test_courier.py."""

import json
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

PROXY = os.environ["COURIER_TEST_PROXY"]
SOCKS = os.environ["COURIER_TEST_SOCKS"]  # its login is py:pw
HTTPS_PROXY = os.environ["COURIER_TEST_HTTPS_PROXY"]  # https://localhost:port, the test CA's certificate
NGINX = os.environ["COURIER_TEST_NGINX"]
HTTPS = os.environ["COURIER_TEST_HTTPS"]
CA = os.path.join(os.environ["COURIER_TEST_CERTS"], "ca.pem")


def lines():
    """The request lines the proxy has seen."""
    with courier.Engine(PROXY, trust_env=False) as direct:
        return [entry["line"] for entry in json.loads(direct.get("/log").body)]


class ProxyTests(unittest.TestCase):
    def test_engine_and_request_proxies(self):
        before = len(lines())
        with courier.Engine(NGINX, proxy=PROXY) as engine:
            self.assertEqual(engine.get("/small").status, 200)
            self.assertEqual(engine.get("/small", proxy="").status, 200)
            self.assertEqual(engine.get("/small", no_proxy="127.0.0.1").status, 200)
            self.assertEqual(engine.get(HTTPS + "/small", cafile=CA).status, 200)
        seen = lines()[before:]
        self.assertEqual(seen[0], "GET %s/small" % NGINX)
        self.assertTrue(seen[1].startswith("CONNECT localhost:"), seen)
        self.assertEqual(len(seen), 2, "proxy='' and no_proxy went direct")
        with courier.Engine(NGINX) as engine:
            self.assertEqual(engine.get("/small", proxy=PROXY).status, 200)
        self.assertEqual(lines()[-1], "GET %s/small" % NGINX)

    def test_clients_read_the_environment_as_httpx(self):
        # httpx reads the upper-case HTTP_PROXY too (curl does not; the engine keeps curl's rule),
        # and NO_PROXY beside it; a CGI program (REQUEST_METHOD set) does not trust it.
        cases = [({"HTTP_PROXY": PROXY}, True, True), ({"HTTP_PROXY": PROXY}, False, False),
                 ({"HTTP_PROXY": PROXY, "NO_PROXY": "127.0.0.1"}, True, False),
                 ({"HTTP_PROXY": PROXY, "REQUEST_METHOD": "GET"}, True, False)]
        names = ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD", "all_proxy", "ALL_PROXY")
        saved = {name: os.environ.pop(name) for name in names if name in os.environ}
        try:
            for environment, trust_env, proxied in cases:
                os.environ.update(environment)
                before = len(lines())
                with courier.Client(trust_env=trust_env) as client:
                    self.assertEqual(client.get(NGINX + "/small").status_code, 200)
                with courier.Engine() as engine:  # (curl's rule: the upper-case name is not read)
                    self.assertEqual(engine.get(NGINX + "/small").status, 200)
                seen = lines()[before:]
                self.assertEqual(seen, ["GET %s/small" % NGINX] if proxied else [], (environment, trust_env))
                for name in environment:
                    del os.environ[name]
        finally:
            for name in names:
                os.environ.pop(name, None)
            os.environ.update(saved)

    def test_the_proxys_failures(self):
        with courier.Engine(proxy=PROXY) as engine:
            for url, code in [("https://refused.test/", courier.E_PROXY_REFUSED),
                              ("https://garbage.test/", courier.E_PROXY_HANDSHAKE),
                              ("https://close.test/", courier.E_PROXY_CLOSED)]:
                with self.assertRaises(courier.CourierError) as caught:
                    engine.get(url)
                self.assertEqual(caught.exception.code, code, url)
        with courier.Engine(NGINX, proxy="127.0.0.1:1") as engine:
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/small")
            self.assertEqual(caught.exception.code, courier.E_CONNECT_PROXY)
        with self.assertRaises(courier.CourierError) as caught:
            courier.Engine(NGINX, proxy="socks4://127.0.0.1:1080")
        self.assertEqual(caught.exception.code, courier.E_PROXY_UNSUPPORTED)


class SocksTests(unittest.TestCase):
    def connects(self):
        """What the SOCKS5 proxy was asked to connect to, as (type, host)."""
        with courier.Engine(SOCKS, trust_env=False) as direct:
            return [(entry["type"], entry["host"]) for entry in json.loads(direct.get("/log").body)]

    def test_socks5h_and_socks5_on_engines_and_requests(self):
        address = SOCKS.replace("http://", "")
        before = len(self.connects())
        with courier.Engine(NGINX, proxy="socks5h://py:pw@" + address) as engine:
            self.assertEqual(engine.get("/small").status, 200)
            self.assertEqual(engine.get(HTTPS + "/small", cafile=CA).status, 200)
            self.assertEqual(engine.get("/small", proxy="socks5://py:pw@" + address).status, 200)
        self.assertEqual(self.connects()[before:], [("ipv4", "127.0.0.1"), ("name", "localhost"), ("ipv4", "127.0.0.1")])

    def test_the_proxys_refusals(self):
        address = SOCKS.replace("http://", "")
        with courier.Engine(NGINX, proxy="socks5h://" + address) as engine:
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/small")
            self.assertEqual(caught.exception.code, courier.E_PROXY_SOCKS_AUTH)
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("http://refused.test/", proxy="socks5h://py:pw@" + address)
            self.assertEqual(caught.exception.code, courier.E_PROXY_SOCKS_CONNECT)

    def test_httpx_shape(self):
        """httpx's proxy="socks5://..." (its socksio extra), and ProxyError for the proxy's failures."""
        address = SOCKS.replace("http://", "")
        with courier.Client(proxy="socks5://py:pw@" + address) as client:
            self.assertEqual(client.get(NGINX + "/small").status_code, 200)
        with courier.Client(proxy="socks5://py:wrong@" + address) as client:
            with self.assertRaises(courier.ProxyError):
                client.get(NGINX + "/small")


class HTTPSProxyTests(unittest.TestCase):
    def test_engine_proxy_verify(self):
        with courier.Engine(NGINX, proxy=HTTPS_PROXY, proxy_verify=CA) as engine:
            self.assertEqual(engine.get("/small").status, 200)
            self.assertEqual(engine.get(HTTPS + "/small", cafile=CA).status, 200)
        with courier.Engine(NGINX, proxy=HTTPS_PROXY, proxy_verify=False) as engine:
            self.assertEqual(engine.get("/small").status, 200)
        with courier.Engine(NGINX, proxy=HTTPS_PROXY) as engine:
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/small")
            self.assertEqual(caught.exception.code & 0xff, 22, "the proxy's certificate is not trusted by the system")

    def test_httpx_proxy_objects(self):
        import ssl
        context = ssl.create_default_context(cafile=CA)
        with courier.Client(proxy=courier.Proxy(HTTPS_PROXY, ssl_context=context), verify=CA) as client:
            self.assertEqual(client.get(HTTPS + "/small").status_code, 200)
            self.assertEqual(client.get(NGINX + "/small").status_code, 200)
        with courier.Client(proxy=HTTPS_PROXY) as client:
            with self.assertRaises(courier.ConnectError):
                client.get(NGINX + "/small")
        proxy = courier.Proxy("socks5://ann:pw@127.0.0.1:1080")
        self.assertEqual((str(proxy.url), proxy.auth), ("socks5://127.0.0.1:1080", ("ann", "pw")))
        with self.assertRaises(courier.UsageError):
            courier.Proxy(HTTPS_PROXY, headers={"X-Proxy": "1"})
        old = ssl.create_default_context(cafile=CA)
        old.minimum_version = ssl.TLSVersion.TLSv1_3
        with self.assertRaises(courier.UsageError):
            courier.Client(proxy=courier.Proxy(HTTPS_PROXY, ssl_context=old))
        with self.assertRaises(ValueError):
            courier.Proxy("ftp://127.0.0.1")


if __name__ == "__main__":
    unittest.main()
