"""``progress=`` on every call (request, get, post, fetch, stream), not only ``send``: against
nginx (COURIER_TEST_NGINX, its 16 KiB /medium) and the streaming server (COURIER_TEST_STREAM,
which reads uploads). Started by the Swift suite like test_courier.py."""

import asyncio
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

NGINX = os.environ["COURIER_TEST_NGINX"]
STREAM = os.environ["COURIER_TEST_STREAM"]


def recorder():
    seen = []
    return seen, lambda direction, done, total: seen.append((direction, done, total))


class ProgressTests(unittest.TestCase):
    def test_blocking_calls(self):
        with courier.Engine(NGINX) as engine:
            seen, progress = recorder()
            self.assertEqual(len(engine.get("/medium", progress=progress).body), 16384)
            downloads = [s for s in seen if s[0] == "download"]
            self.assertTrue(downloads and downloads[-1] == ("download", 16384, 16384), seen[-3:])
        with courier.Engine(STREAM) as engine:
            seen, progress = recorder()
            engine.post("/upload?discard=1", content=b"u" * 300_000, progress=progress)
            uploads = [s for s in seen if s[0] == "upload"]
            self.assertTrue(uploads and uploads[-1][1] == 300_000, uploads[-3:])

    def test_fetch_and_stream(self):
        async def fetched():
            seen, progress = recorder()
            with courier.Engine(NGINX) as engine:
                await engine.fetch("GET", "/medium", progress=progress)
            return seen
        self.assertEqual(asyncio.run(fetched())[-1], ("download", 16384, 16384))
        with courier.Engine(NGINX) as engine:
            seen, progress = recorder()
            with engine.stream("GET", "/medium", progress=progress) as response:
                self.assertEqual(sum(len(chunk) for chunk in response.iter_bytes()), 16384)
            self.assertEqual(seen[-1], ("download", 16384, 16384))

    def test_a_progress_callback_that_raises_does_not_stop_the_transfer(self):
        def broken(direction, done, total):
            raise RuntimeError("progress")
        hooked = []
        previous, sys.unraisablehook = sys.unraisablehook, hooked.append
        try:
            with courier.Engine(NGINX) as engine:
                self.assertEqual(len(engine.get("/medium", progress=broken).body), 16384)
        finally:
            sys.unraisablehook = previous
        self.assertTrue(hooked, "reported through sys.unraisablehook")


if __name__ == "__main__":
    unittest.main()
