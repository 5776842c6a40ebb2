"""An engine's requests cancelled all at once and by a predicate, and a request as a curl command,
from Python, against the scripted server (COURIER_TEST_SCRIPTED; its /silence holds an answer
back). Started by the Swift suite like test_courier.py."""

import os
import sys
import threading
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]


class EngineControlTests(unittest.TestCase):
    def send_held(self, engine, paths):
        """Sends each path (held 30 s by the server); returns {path: outcome} filled as they end."""
        ended, events = {}, {path: threading.Event() for path in paths}

        def done(path):
            def callback(response, error):
                ended[path] = type(error).__name__ if error else response.status
                events[path].set()
            return callback
        for path in paths:
            engine.send("GET", path, callback=done(path))
        return ended, events

    def test_cancel_where_then_all(self):
        with courier.Engine(SCRIPTED) as engine, courier.Engine(SCRIPTED) as other:
            paths = ["/silence?s=30&drop=1", "/silence?s=30&keep=1", "/silence?s=30&drop=2"]
            ended, events = self.send_held(engine, paths)
            elsewhere, elsewhere_events = self.send_held(other, ["/silence?s=30&drop=3"])
            asked = []

            def where(method, url):
                asked.append(method)
                return "drop=" in url
            engine.cancel_all(where=where)
            self.assertEqual(len(asked), 3, "asked before cancel_all returned, about this engine's requests only")
            for path in (paths[0], paths[2]):
                self.assertTrue(events[path].wait(10))
                self.assertEqual(ended[path], "Cancelled")
            self.assertNotIn(paths[1], ended)
            engine.cancel_all()
            self.assertTrue(events[paths[1]].wait(10))
            self.assertEqual(ended[paths[1]], "Cancelled")
            self.assertEqual(elsewhere, {}, "another engine's request is untouched")
            other.cancel_all()
            self.assertTrue(elsewhere_events["/silence?s=30&drop=3"].wait(10))

    def test_invalidate(self):
        with courier.Engine(SCRIPTED) as engine:
            ended, events = self.send_held(engine, ["/silence?s=30&inv=1"])
            engine.invalidate(cancel_running=True)
            self.assertTrue(events["/silence?s=30&inv=1"].wait(10))
            self.assertEqual(ended["/silence?s=30&inv=1"], "Cancelled")
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/small")
            self.assertEqual(caught.exception.code, courier.E_INVALIDATED)
            engine.invalidate()  # (once: nothing more)

    def test_mock_engine(self):
        seen = []

        def handler(method, target, headers, body):
            seen.append((method, target, dict(headers).get("Host"), body))
            if target == "/moved":
                return 302, {"Location": "/items"}, b""
            if target == "/boom":
                raise RuntimeError("the handler failed")
            return 200, [("Content-Type", "text/plain")], b"answered " + target.encode()
        reported = []
        kept, sys.unraisablehook = sys.unraisablehook, reported.append
        try:
            with courier.Engine("http://api.example.test", mock=handler, accepted_status=(200, 600)) as engine:
                self.assertEqual(engine.get("/items").body, b"answered /items")
                moved = engine.get("/moved")
                self.assertEqual((moved.status, moved.body), (200, b"answered /items"))
                self.assertEqual(engine.post("/echo", data=b"hi").body, b"answered /echo")
                self.assertEqual(engine.get("/boom").status, 500)
        finally:
            sys.unraisablehook = kept
        # The handler's exception is reported through sys.unraisablehook, with the handler.
        self.assertEqual([(type(r.exc_value), r.object) for r in reported], [(RuntimeError, handler)])
        self.assertEqual(seen[0], ("GET", "/items", "api.example.test", b""))
        self.assertEqual(seen[3][3], b"hi")

    def test_a_predicate_that_raises(self):
        with courier.Engine(SCRIPTED) as engine:
            ended, events = self.send_held(engine, ["/silence?s=30&raise=1"])

            def where(method, url):
                raise ValueError("no")
            with self.assertRaises(ValueError):
                engine.cancel_all(where=where)
            self.assertEqual(ended, {}, "nothing cancelled")
            engine.cancel_all()
            self.assertTrue(events["/silence?s=30&raise=1"].wait(10))

    def test_curl_command(self):
        with courier.Engine(SCRIPTED) as engine:
            command = engine.curl_command("POST", "/echo", params={"a": "1"}, headers={"X-Trace": "it's 1"},
                                          content=b"hello")
        self.assertTrue(command.startswith("curl -X POST "), command)
        self.assertIn("/echo?a=1", command)
        self.assertIn("-H 'X-Trace: it'\\''s 1'", command)
        self.assertIn("--data-binary hello", command)


if __name__ == "__main__":
    unittest.main()
