"""HSTS through the Python binding against the test nginx (COURIER_TEST_HTTPS; its /hsts sends
Strict-Transport-Security): a store noted over https, then http:// to that host sent over https,
saved in curl's format and read back. Started by the Swift suite like test_courier.py."""

import os
import sys
import tempfile
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

HTTPS = os.environ["COURIER_TEST_HTTPS"]
CA = os.path.join(os.environ["COURIER_TEST_CERTS"], "ca.pem")


class HSTSTests(unittest.TestCase):
    def test_noted_then_upgraded_and_saved(self):
        plain = HTTPS.replace("https://", "http://") + "/small"
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "hsts.txt")
            store = courier.HSTS(path)
            with courier.Engine(hsts=store, accepted_status=(200, 600)) as engine:
                self.assertEqual(engine.get(plain).status, 400, "before: plain HTTP to the TLS port")
                self.assertEqual(engine.get(HTTPS + "/hsts", cafile=CA).status, 200)
                self.assertTrue(store.requires_https("localhost"))
                upgraded = engine.get(plain, cafile=CA)
                self.assertEqual((upgraded.status, upgraded.url), (200, HTTPS + "/small"))
            store.save()
            with open(path) as f:
                self.assertIn('.localhost "', f.read())
            self.assertTrue(courier.HSTS(path).requires_https("sub.localhost"))
            self.assertFalse(courier.HSTS().requires_https("localhost"), "a memory store starts empty")


if __name__ == "__main__":
    unittest.main()
