"""Retries through the Python binding, against a private Tests/Servers/retry_server.py
(COURIER_TEST_RETRY; its retry budget is this file's). Started by the Swift suite like
test_courier.py."""

import asyncio
import json
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

RETRY = os.environ["COURIER_TEST_RETRY"]


class RetryTests(unittest.TestCase):
    def setUp(self):
        self.engine = courier.Engine(RETRY)

    def tearDown(self):
        self.engine.close()

    def log(self, key):
        return json.loads(self.engine.get("/log/" + key).body)

    def test_failures_then_success_follow_the_intervals(self):
        response = self.engine.get("/flaky/p1?fail=2&mode=503", retry=courier.Retry(count=3, intervals=[0.1, 0.2]))
        self.assertEqual(response.status, 200)
        self.assertEqual(response.body, b"ok 3")
        self.assertEqual(response.retries, 2)
        self.assertEqual(response.retry_reasons, [courier.RetryReason(503, 0), courier.RetryReason(503, 0)])
        times = self.log("p1")["times"]
        self.assertGreaterEqual(times[1] - times[0], 0.095)
        self.assertGreaterEqual(times[2] - times[1], 0.195)

    def test_a_count_alone_and_a_reset(self):
        response = self.engine.get("/flaky/p2?fail=1&mode=reset", retry=courier.Retry(count=1, intervals=[0.02]))
        self.assertEqual(response.body, b"ok 2")
        # (A reset on a reused keep-alive connection is replayed at once, not counted as a retry.)
        self.assertIn(response.retries, (0, 1))
        self.assertEqual(self.engine.get("/ok", retry=2).status, 200)

    def test_the_hook_sees_each_retry_and_may_stop(self):
        seen = []

        def on_retry(number, reason):
            seen.append((number, reason.status))
            return number < 2

        with self.assertRaises(courier.HTTPStatusError) as caught:
            self.engine.get("/flaky/p3?fail=9&mode=503", retry=courier.Retry(count=5, intervals=[0.02], on_retry=on_retry))
        self.assertEqual(seen, [(1, 503), (2, 503)])
        self.assertEqual(caught.exception.response.status, 503)
        self.assertEqual(caught.exception.response.retries, 1)

    def test_a_post_needs_a_key(self):
        with self.assertRaises(courier.HTTPStatusError):
            self.engine.post("/flaky/p4?fail=1&mode=503", data=b"x", retry=courier.Retry(count=2, intervals=[0.02]))
        self.assertEqual(self.log("p4")["count"], 1)
        response = self.engine.post("/flaky/p5?fail=1&mode=503", data=b"x", headers={"Idempotency-Key": "k1"},
                                    retry=courier.Retry(count=2, intervals=[0.02]))
        self.assertEqual(response.status, 200)
        self.assertEqual(self.log("p5")["keys"], ["k1", "k1"])

    def test_asyncio(self):
        async def main():
            return await self.engine.fetch("GET", "/flaky/p6?fail=1&mode=429", retry=courier.Retry(count=1, intervals=[0.02]))
        response = asyncio.run(main())
        self.assertEqual(response.status, 200)
        self.assertEqual(response.retries, 1)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            courier.Retry(count=-1)
        with self.assertRaises(ValueError):
            courier.Retry(intervals=[-1])
        with self.assertRaises(courier.CourierError):
            self.engine.get("/ok", retry=courier.Retry(count=1, statuses=[42]))


if __name__ == "__main__":
    unittest.main()
