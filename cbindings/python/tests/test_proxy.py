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
            courier.Engine(NGINX, proxy="socks5://127.0.0.1:1080")
        self.assertEqual(caught.exception.code, courier.E_PROXY_UNSUPPORTED)


if __name__ == "__main__":
    unittest.main()
