"""Groups and chains through the Python binding, against the scripted server
(COURIER_TEST_SCRIPTED: /status, /slow, /echo). Started by the Swift suite like test_courier.py."""

import json
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]


class GroupTests(unittest.TestCase):
    def setUp(self):
        self.engine = courier.Engine(SCRIPTED)

    def tearDown(self):
        self.engine.close()

    def test_a_group_settles_every_member_in_order(self):
        results = self.engine.group([("GET", "/status", {"params": {"body": str(i), "code": "500" if i == 2 else "200"}})
                                     for i in range(5)])
        self.assertEqual(len(results), 5)
        self.assertIsInstance(results[2], courier.HTTPStatusError)
        self.assertEqual(results[2].response.status, 500)
        self.assertEqual([r.body for r in results if isinstance(r, courier.Response)], [b"0", b"1", b"3", b"4"])
        self.assertEqual(self.engine.group([]), [])

    def test_fail_fast_cancels_the_rest(self):
        # The failing member first: never queued behind the slow ones, which would otherwise succeed.
        results = self.engine.group([("GET", "/status?code=503")] + [("GET", "/slow?ms=5000")] * 3, fail_fast=True)
        self.assertIsInstance(results[0], courier.HTTPStatusError)
        for result in results[1:]:
            self.assertIsInstance(result, courier.CourierError)
            self.assertEqual(result.primary, 18)  # cancelled

    def test_a_chain_builds_each_step_from_the_previous(self):
        seen = []

        def on_next(index, previous, step):
            seen.append((index, previous.status))
            return step
        outcome = self.engine.chain([
            ("GET", "/echo", {"params": {"step": "login"}}),
            lambda previous: ("GET", "/echo", {"params": {"step": json.loads(previous.body)["query"]["step"] + "-2"}}),
            ("GET", "/status?code=404"),
            ("GET", "/echo", {"params": {"step": "never"}}),
        ], on_next=on_next)
        self.assertEqual(outcome.failed_step, 2)
        self.assertFalse(outcome.stopped_early)
        self.assertEqual(len(outcome.results), 3)
        self.assertEqual(json.loads(outcome.results[1].body)["query"]["step"], "login-2")
        self.assertIsInstance(outcome.results[2], courier.HTTPStatusError)
        self.assertEqual(seen, [(0, 200), (1, 200)])
        stopped = self.engine.chain([("GET", "/status"), ("GET", "/status")], on_next=lambda i, p, s: None)
        self.assertEqual((len(stopped.results), stopped.failed_step, stopped.stopped_early), (1, None, True))


if __name__ == "__main__":
    unittest.main()
