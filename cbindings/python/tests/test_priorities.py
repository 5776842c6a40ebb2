"""Priorities through the Python binding, against the streaming server (COURIER_TEST_STREAM):
background work ("low", "very_low") yields to requests the user waits for. Started by the Swift
suite like test_courier.py."""

import asyncio
import json
import os
import sys
import time
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

STREAM = os.environ["COURIER_TEST_STREAM"]


class BackgroundWorkTests(unittest.TestCase):
    def test_a_background_upload_pauses_while_foreground_work_runs(self):
        # 32 MiB the server reads at 32 MB/s (about a second; the kernel's buffers take a few MiB
        # at most) beside a request the server answers after 3 s: held, the upload cannot end
        # before that request; at "normal" it would end seconds earlier.
        length = 32 << 20

        async def main(priority):
            ended = {}
            with courier.Engine(STREAM) as engine:
                async def timed(name, method, path, **options):
                    response = await engine.fetch(method, path, **options)
                    ended[name] = time.monotonic()
                    return response
                upload, answer = await asyncio.gather(
                    timed("upload", "POST", "/upload?discard=1&slow=32000000", content=b"7" * length, priority=priority),
                    timed("foreground", "GET", "/blob/1000?delay=3000"))
            return json.loads(upload.body)["length"], answer.status, ended["upload"] > ended["foreground"]

        self.assertEqual(asyncio.run(main("low")), (length, 200, True))
        self.assertEqual(asyncio.run(main("normal")), (length, 200, False), "the check tells a held upload apart")


if __name__ == "__main__":
    unittest.main()
