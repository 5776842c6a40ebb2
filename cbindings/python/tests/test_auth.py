"""Basic and Bearer authentication through the Python binding, against the scripted server's
/echo (COURIER_TEST_SCRIPTED). Started by the Swift suite like test_courier.py."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]


def authorization(response):
    for name, value in json.loads(response.body)["headers"]:
        if name.lower() == "authorization":
            return value
    return None


class AuthTests(unittest.TestCase):
    def test_basic_and_bearer(self):
        with courier.Engine(SCRIPTED) as engine:
            self.assertEqual(authorization(engine.get("/echo", auth=("Aladdin", "open sesame"))),
                             "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
            self.assertEqual(authorization(engine.get("/echo", auth=courier.Bearer("py-token"))), "Bearer py-token")
            self.assertIsNone(authorization(engine.get("/echo")))
            with self.assertRaises(courier.CourierError):
                engine.get("/echo", auth=courier.Bearer("bad\r\ntoken"))
            with self.assertRaises(courier.CourierError):
                engine.get("/echo", auth="user:pass")


if __name__ == "__main__":
    unittest.main()
