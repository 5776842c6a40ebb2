"""A body to several consumers at once (``on_data`` beside ``output``) and a file chosen from the
response head (``destination``), on any call, against nginx (COURIER_TEST_NGINX: /medium is
16 KiB). Started by the Swift suite like test_courier.py."""

import os
import sys
import tempfile
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

NGINX = os.environ["COURIER_TEST_NGINX"]


class ConsumerTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="courier-consumers-")

    def tearDown(self):
        for name in os.listdir(self.directory):
            os.unlink(os.path.join(self.directory, name))
        os.rmdir(self.directory)

    def test_every_consumer_and_the_file_get_the_same_body(self):
        first, second = [], []
        path = os.path.join(self.directory, "medium")
        with courier.Engine(NGINX) as engine:
            response = engine.get("/medium", on_data=[first.append, second.append], output=path)
        with open(path, "rb") as f:
            on_disk = f.read()
        self.assertEqual(len(on_disk), 16384)
        self.assertEqual(b"".join(first), on_disk)
        self.assertEqual(b"".join(second), on_disk)
        self.assertEqual(response.body, b"", "consumed bodies are not kept in memory")

    def test_a_destination_from_the_head(self):
        seen = []

        def choose(head):
            seen.append((head.status, head.headers.get("content-length")))
            return os.path.join(self.directory, "chosen-%d" % head.status) if head.status == 200 else None
        with courier.Engine(NGINX, accepted_status=(0, 1000)) as engine:
            engine.get("/medium", destination=choose)
            missing = engine.get("/no-such-file", destination=choose)
        self.assertEqual([status for status, _ in seen], [200, 404])
        self.assertEqual(seen[0][1], "16384", "the head's fields are there")
        self.assertEqual(os.path.getsize(os.path.join(self.directory, "chosen-200")), 16384)
        self.assertTrue(missing.body, "None keeps the body in the response")
        self.assertEqual(os.listdir(self.directory), ["chosen-200"])

    def test_a_consumer_that_raises_fails_the_request(self):
        def broken(piece):
            raise RuntimeError("full")
        hooked = []
        previous, sys.unraisablehook = sys.unraisablehook, hooked.append
        try:
            with courier.Engine(NGINX) as engine:
                with self.assertRaises(courier.CourierError):
                    engine.get("/medium", on_data=broken)
        finally:
            sys.unraisablehook = previous
        self.assertTrue(hooked)


if __name__ == "__main__":
    unittest.main()
