"""HTTP/2 through the Python binding as httpx spells it: ``Client(http2=True)`` negotiates h2 by
ALPN and ``response.http_version`` says "HTTP/2"; the default stays HTTP/1.1, as httpx's. Against
the suite's nginx with ``http2`` (started by the Swift suite like test_courier.py)."""

import asyncio
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

H2 = os.environ["COURIER_TEST_H2"]
CA = os.path.join(os.environ["COURIER_TEST_CERTS"], "ca.pem")


class HTTP2(unittest.TestCase):
    def test_client_http2_true_speaks_h2(self):
        with courier.Client(http2=True, verify=CA) as client:
            response = client.get(H2 + "/small")
            self.assertEqual(response.status_code, 200)
            self.assertEqual(response.http_version, "HTTP/2")

    def test_default_is_http11_as_httpx(self):
        with courier.Client(verify=CA) as client:
            self.assertEqual(client.get(H2 + "/small").http_version, "HTTP/1.1")

    def test_http2_only_and_neither(self):
        with courier.Client(http1=False, http2=True, verify=CA) as client:
            self.assertEqual(client.get(H2 + "/small").http_version, "HTTP/2")
        with self.assertRaises(ValueError):
            courier.Client(http1=False, http2=False)

    def test_async_client_multiplexes(self):
        async def fetch_all():
            async with courier.AsyncClient(http2=True, verify=CA) as client:
                return await asyncio.gather(*(client.get(H2 + "/small") for _ in range(20)))
        responses = asyncio.run(fetch_all())
        self.assertTrue(all(r.status_code == 200 and r.http_version == "HTTP/2" for r in responses))

    def test_engine_option_and_bad_value(self):
        with courier.Engine(H2) as engine:
            self.assertEqual(engine.get("/small", cafile=CA, http_version="1.1").http_version, "HTTP/1.1")
            self.assertEqual(engine.get("/small", cafile=CA).http_version, "HTTP/2")
            with self.assertRaises(ValueError):
                engine.get("/small", cafile=CA, http_version="3")

    def test_http2_ping_interval(self):
        with courier.Engine(H2) as engine:
            response = engine.get("/small", cafile=CA, http2_ping_interval=0.05)
            self.assertEqual((response.status_code, response.http_version), (200, "HTTP/2"))
            with self.assertRaises(courier.CourierError):
                engine.get("/small", cafile=CA, http2_ping_interval=-1)


if __name__ == "__main__":
    unittest.main()
