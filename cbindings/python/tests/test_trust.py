"""The application's trust decision and report-only pins from Python (``Engine(trust=,
pin_mismatch=, pin_mode=)``), against the suite's nginx TLS servers: one with a certificate from
the test CA (COURIER_TEST_HTTPS, COURIER_TEST_CERTS), one self-signed (COURIER_TEST_SELFSIGNED).
Started by the Swift suite like test_courier.py."""

import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

HTTPS = os.environ["COURIER_TEST_HTTPS"]
SELFSIGNED = os.environ["COURIER_TEST_SELFSIGNED"]
CA = os.path.join(os.environ["COURIER_TEST_CERTS"], "ca.pem")
BOGUS_PIN = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


class TrustTests(unittest.TestCase):
    def test_a_verified_chain_refused_by_the_hook(self):
        seen = []
        with courier.Engine(trust=lambda context: seen.append(context) and False) as engine:
            with self.assertRaises(courier.TLSError):
                engine.get(HTTPS + "/small", cafile=CA)
        context = seen[0]
        self.assertEqual((context.host, context.error, context.pin_matched), ("localhost", None, None))
        self.assertTrue(context.chain and context.chain[0][:1] == b"\x30", "DER certificates, leaf first")

    def test_a_self_signed_chain_accepted_by_the_hook(self):
        verdicts = []
        with courier.Engine(trust=lambda context: verdicts.append(context.error) or True) as engine:
            self.assertEqual(engine.get(SELFSIGNED + "/small").status, 200)
        self.assertIsInstance(verdicts[0], courier.TLSError, "Courier's own verdict is there")

    def test_report_only_pins(self):
        reports = []
        with courier.Engine(pin_mismatch=lambda host, port: reports.append(host), pin_mode="report_only") as engine:
            self.assertEqual(engine.get(HTTPS + "/small", cafile=CA, pins=BOGUS_PIN).status, 200)
        self.assertEqual(reports, ["localhost"])
        with courier.Engine(pin_mode="enforce") as engine:
            with self.assertRaises(courier.TLSError):
                engine.get(HTTPS + "/small", cafile=CA, pins=BOGUS_PIN)
        with self.assertRaises(ValueError):
            courier.Engine(pin_mode="sometimes")


if __name__ == "__main__":
    unittest.main()
