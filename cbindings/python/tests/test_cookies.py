"""Cookie jars through the Python binding, against Tests/Servers/cookie_server.py
(COURIER_TEST_COOKIES). Started by the Swift suite like test_courier.py."""

import os
import sys
import tempfile
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

COOKIES = os.environ["COURIER_TEST_COOKIES"]


class CookieTests(unittest.TestCase):
    def test_an_engine_jar_stores_and_sends(self):
        jar = courier.CookieJar()
        with courier.Engine(COOKIES, cookies=jar) as engine:
            engine.get("/set", params={"c": "py=1"})
            self.assertEqual(engine.get("/echo").body, b"py=1")
            self.assertEqual(len(jar), 1)
        with courier.Engine(COOKIES) as plain:
            self.assertEqual(plain.get("/echo").body, b"")
            self.assertEqual(plain.get("/echo", cookies=jar).body, b"py=1")

    def test_files_round_trip(self):
        jar = courier.CookieJar()
        with courier.Engine(COOKIES, cookies=jar) as engine:
            engine.get("/set?c=a%3D1%3B%20Max-Age%3D600&c=b%3D2")
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "jar.txt")
            jar.save(path)
            with open(path) as f:
                self.assertTrue(f.read().startswith("# Netscape HTTP Cookie File"))
            again = courier.CookieJar(path)
            self.assertEqual(len(again), 2)
            with courier.Engine(COOKIES) as engine:
                self.assertEqual(set(engine.get("/echo", cookies=again).body.split(b"; ")), {b"a=1", b"b=2"})
            self.assertEqual(len(courier.CookieJar(os.path.join(directory, "missing.txt"))), 0)
            with self.assertRaises(courier.CourierError):
                jar.save(os.path.join(directory, "no-such-dir", "jar.txt"))
        jar.clear()
        self.assertEqual(len(jar), 0)


if __name__ == "__main__":
    unittest.main()
