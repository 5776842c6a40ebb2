"""curl's connection options through the Python binding: cipher lists, TLS 1.3 suites and
curves, ALPN off, minimum versions, the 100-continue wait, the response head's limits and an
http URL through a proxy's CONNECT tunnel. Started by the Swift suite like test_courier.py."""

import json
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]
HTTPS = os.environ["COURIER_TEST_HTTPS"]
STREAM = os.environ["COURIER_TEST_STREAM"]
PROXY = os.environ["COURIER_TEST_PROXY"]
CA = os.path.join(os.environ["COURIER_TEST_CERTS"], "ca.pem")


class ConnectionOptions(unittest.TestCase):
    def handshake(self, **options):
        """The connection lines of one https request (the text of the CLI's -v)."""
        seen = []
        with courier.Engine(HTTPS, on_debug=lambda kind, data: seen.append(data) if kind == "text" else None) as engine:
            self.assertEqual(engine.get("/small", cafile=CA, **options).status, 200)
        return b"".join(seen).decode()

    def test_cipher_lists_versions_and_alpn(self):
        text = self.handshake(tls_version=("1.0", "1.2"), ciphers="ECDHE-RSA-AES128-GCM-SHA256", curves="P-384")
        self.assertIn("SSL connection using TLSv1.2 / ECDHE-RSA-AES128-GCM-SHA256 / secp384r1", text)
        self.assertIn("ALPN: offers h2,http/1.1", text)
        self.assertNotIn("ALPN", self.handshake(alpn=False))
        with courier.Engine(HTTPS) as engine:
            for options in ({"ciphers": "NOT-A-CIPHER"}, {"tls13_ciphers": "TLS_NOPE"}, {"curves": "no-curve"}):
                with self.assertRaises(courier.CourierError) as raised:
                    engine.get("/small", cafile=CA, **options)
                self.assertEqual(raised.exception.code, courier.E_TLS_CIPHER, options)
            with self.assertRaises(courier.CourierError) as raised:
                engine.get("/small", tls_version=("1.4", None))
            self.assertEqual(raised.exception.code, 2)  # COURIER_E_INVALID_ARGUMENT

    def test_response_head_limits(self):
        with courier.Engine(SCRIPTED) as engine:
            # 256 KiB passes by default (curl's 300 KiB); lower limits refuse it with their own codes.
            self.assertEqual(engine.get("/big-head", params={"kib": 256}).status, 200)
            for options, code in (({"max_header_bytes": 64 << 10}, courier.E_HEADER_BYTES),
                                  ({"max_header_fields": 100}, courier.E_HEADER_COUNT)):
                with self.assertRaises(courier.CourierError) as raised:
                    engine.get("/big-head", params={"kib": 256}, **options)
                self.assertEqual(raised.exception.code, code, options)

    def test_continue_timeout(self):
        body = b"b" * (1 << 20)
        with courier.Engine(STREAM) as engine:
            # The server never says 100: a short wait sends the body; a long one meets the deadline.
            answer = engine.request("PUT", "/upload?no100=1", data=body, expect_continue="always", continue_timeout=0.05)
            self.assertEqual(json.loads(answer.body)["length"], len(body))
            with self.assertRaises(courier.CourierError) as raised:
                engine.request("PUT", "/upload?no100=1", data=body, expect_continue="always", continue_timeout=60,
                               timeout=0.5)
            self.assertEqual(raised.exception.primary, 8)  # COURIER_E_TIMEOUT
            self.assertEqual(engine.get("/blob/10", happy_eyeballs=0.1).status, 200)

    def test_proxy_tunnel_for_http(self):
        with courier.Engine(SCRIPTED, proxy=PROXY) as engine:
            self.assertEqual(engine.get("/echo", proxy_tunnel=True).status, 200)
        with courier.Engine(PROXY, trust_env=False) as direct:
            lines = [entry["line"] for entry in json.loads(direct.get("/log").body)]
        authority = SCRIPTED[len("http://"):]
        self.assertIn("CONNECT %s" % authority, lines)
        self.assertNotIn("GET %s/echo" % SCRIPTED, lines)


if __name__ == "__main__":
    unittest.main()
