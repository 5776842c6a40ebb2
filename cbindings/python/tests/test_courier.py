"""Tests of the Python binding against real local servers.

The Swift test suite runs this file with COURIER_LIBRARY (the built library), COURIER_TEST_NGINX
(an nginx serving /small, 100 bytes) and COURIER_TEST_SCRIPTED (Tests/Servers/scripted_server.py).
By hand: start both servers and export the three variables, then
    python3 -m unittest discover -s cbindings/python/tests -v
"""

import asyncio
import json
import os
import sys
import threading
import time
import unittest
import uuid

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

NGINX = os.environ["COURIER_TEST_NGINX"]
SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]


def wait_for_server(group, seen=1):
    """Waits (up to 10 s) until the scripted server has seen `seen` requests of `group`: the
    event a test needs before cancelling something that is in flight."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if stats(group)["seen"] >= seen:
            return True
        time.sleep(0.01)
    return False


def stats(group):
    with courier.Engine(SCRIPTED) as engine:
        return engine.get("/stats", params={"of": group}).json()


class Blocking(unittest.TestCase):
    def test_version_and_errors(self):
        self.assertEqual(courier.version(), "0.5.0")
        self.assertEqual(courier.strerror(0), "no error")
        self.assertEqual(courier.strerror(8 | 2 << 8), "connect timed out")

    def test_a_bare_host_means_https(self):
        # The same rule as Swift's Engine(host:) and C's courier_engine_create: the plain-HTTP
        # nginx port spoken to with TLS fails the handshake; with http:// it answers.
        bare = NGINX[len("http://"):]
        with courier.Engine(bare) as engine:
            with self.assertRaises(courier.CourierError) as raised:
                engine.get("/small")
            self.assertEqual(raised.exception.primary, 22, raised.exception)  # COURIER_E_TLS
        with courier.Engine("http://" + bare) as engine:
            self.assertEqual(engine.get("/small").status, 200)

    def test_get_reuses_the_connection(self):
        with courier.Engine(NGINX, headers={"X-From": "python"}) as engine:
            first = engine.get("/small")
            second = engine.get("/small")
        self.assertEqual(first.status, 200)
        self.assertEqual(len(first.body), 100)
        self.assertEqual(first.header("content-length"), "100")
        self.assertTrue(str(first.url).endswith("/small"))
        self.assertTrue(second.reused_connection)
        self.assertGreater(first.timings["total"], 0)

    def test_output_file_keeps_the_size(self):
        import tempfile
        with tempfile.TemporaryDirectory() as directory, courier.Engine(NGINX) as engine:
            path = os.path.join(directory, "small.bin")
            response = engine.get("/small", output=path)
            self.assertEqual(response.body, b"")
            self.assertEqual(response.size, 100)
            with open(path, "rb") as f:
                self.assertEqual(len(f.read()), 100)
            self.assertEqual(engine.get("/small").size, 100)

    def test_form_json_and_raw_bodies(self):
        with courier.Engine(SCRIPTED, headers={"X-Default": "d"}) as engine:
            form = engine.post("/echo", params={"b": "x y", "a": "1"}).json()
            self.assertEqual(form["body"], "a=1&b=x+y")
            self.assertIn(["Content-Type", "application/x-www-form-urlencoded"], form["headers"])
            self.assertIn(["X-Default", "d"], form["headers"])
            as_json = engine.post("/echo", json={"k": "v"}).json()
            self.assertEqual(json.loads(as_json["body"]), {"k": "v"})
            nested = engine.post("/echo", json={"n": [1, 2]}).json()
            self.assertEqual(json.loads(nested["body"]), {"n": [1, 2]})
            raw = engine.put("/echo", data=b"\x00\x01binary", headers={"X-Default": None}).json()
            self.assertEqual(raw["method"], "PUT")
            self.assertEqual(raw["body"], "\x00\x01binary")
            self.assertNotIn("X-Default", [name for name, _ in raw["headers"]])
            query = engine.get("/echo", params={"q": "a&b"}).json()
            self.assertEqual(query["query"], {"q": "a&b"})

    def test_unaccepted_status_keeps_the_response(self):
        with courier.Engine(SCRIPTED) as engine:
            with self.assertRaises(courier.HTTPStatusError) as caught:
                engine.get("/status", params={"code": "404", "body": "gone"})
        self.assertEqual(caught.exception.code, 24)
        self.assertEqual(caught.exception.response.status, 404)
        self.assertEqual(caught.exception.response.body, b"gone")
        with courier.Engine(SCRIPTED, accepted_status=(200, 500)) as engine:
            self.assertEqual(engine.get("/status", params={"code": "404"}).status, 404)

    def test_bad_input_raises_clear_errors(self):
        with self.assertRaises(courier.CourierError) as caught:
            courier.Engine("ftp://example.com")
        self.assertEqual(caught.exception.code, 4)
        with self.assertRaises(courier.CourierError) as caught:
            courier.Engine(NGINX, headers={"X-Bad": "a\r\nInjected: 1"})
        self.assertEqual(caught.exception.code, 5)
        with courier.Engine(NGINX) as engine:
            for kwargs, code in [({"headers": {"X-Bad": "1\n2"}}, 5), ({"headers": {"Bad Name": "1"}}, 5),
                                 ({"priority": "urgent"}, 2), ({"timeouts": {"forever": 1}}, 2)]:
                with self.assertRaises(courier.CourierError) as caught:
                    engine.get("/small", **kwargs)
                self.assertEqual(caught.exception.code, code, kwargs)
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("http://[::1/")
            self.assertEqual(caught.exception.code, 3)
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("http://127.0.0.1:1/")
            self.assertEqual(caught.exception.code, 7)
        # A closed engine refuses politely.
        with self.assertRaises(courier.CourierError) as caught:
            engine.get("/small")
        self.assertEqual(caught.exception.code, 1)

    def test_timeout_and_malformed_response(self):
        with courier.Engine(SCRIPTED) as engine:
            started = time.monotonic()
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/silence", timeouts={"first_byte": 0.3})
            self.assertEqual(caught.exception.primary, 8)
            self.assertLess(time.monotonic() - started, 5)
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/truncated")
            self.assertEqual(caught.exception.code, 11)

    def test_brotli_and_zstd_bodies(self):
        text = b"hello, compressed world. " * 400
        with courier.Engine(SCRIPTED) as engine:
            self.assertEqual(engine.get("/br").body, text)
            self.assertEqual(engine.get("/zstd").body, text)
            with self.assertRaises(courier.CourierError) as caught:
                engine.get("/unknown-coding")
            self.assertEqual(caught.exception.code, courier.E_UNSUPPORTED_ENCODING)
            self.assertIn("unsupported", str(caught.exception))

    def test_routes_resolve_connect_to_and_families(self):
        port = SCRIPTED.rsplit(":", 1)[1]
        with courier.Engine() as engine:
            resolved = engine.get("http://route.test:%s/echo" % port, resolve=["route.test:%s:127.0.0.1" % port])
            self.assertIn('"route.test:%s"' % port, resolved.text)
            moved = engine.get("http://elsewhere.test/echo", connect_to=["elsewhere.test:80:127.0.0.1:%s" % port])
            self.assertIn('["Host", "elsewhere.test"]', moved.text)
            with self.assertRaises(courier.CourierError) as caught:
                engine.get(SCRIPTED + "/echo", ip_family="ipv6")
            self.assertEqual(caught.exception.code, 7)
            with self.assertRaises(courier.CourierError):
                engine.get(SCRIPTED + "/echo", resolve=["nonsense"])

    def test_threads_wait_in_parallel(self):
        group = "pythreads-" + uuid.uuid4().hex[:8]
        results = []
        with courier.Engine(SCRIPTED) as engine:
            def worker():
                results.append(engine.get("/slow", params={"ms": "200", "group": group}).status)
            threads = [threading.Thread(target=worker) for _ in range(4)]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        self.assertEqual(results, [200] * 4)
        # The GIL is released while waiting: the four ran at once.
        self.assertGreaterEqual(stats(group)["peak"], 2)
        self.assertLess(time.monotonic() - started, 4 * 0.2 + 2)


class Callbacks(unittest.TestCase):
    def setUp(self):
        self.unraisable = []
        self.previous_hook = sys.unraisablehook
        sys.unraisablehook = self.unraisable.append

    def tearDown(self):
        sys.unraisablehook = self.previous_hook

    def test_callbacks_run_and_a_raising_one_is_contained(self):
        seen = []
        with courier.Engine(NGINX) as engine:
            def record(response, error):
                seen.append((response.status if response else None, error))

            def explode(response, error):
                raise ValueError("callback failure")

            requests = [engine.send("GET", "/small", callback=record) for _ in range(5)]
            bad = engine.send("GET", "/small", callback=explode)
            more = [engine.send("GET", "/small", callback=record) for _ in range(5)]
            for request in requests + more:
                self.assertEqual(request.wait(10).status, 200)
            with self.assertRaises(ValueError):
                bad.wait(10)
        self.assertEqual(sorted(seen, key=str), [(200, None)] * 10)
        raised = [u for u in self.unraisable if isinstance(u.exc_value, ValueError)]
        self.assertEqual(len(raised), 1, [(u.exc_value, u.err_msg, u.object) for u in self.unraisable])

    def test_progress_and_errors_reach_callbacks(self):
        events = []
        with courier.Engine(SCRIPTED) as engine:
            request = engine.send("POST", "/echo", data=b"x" * 300_000,
                                  progress=lambda direction, done, total: events.append((direction, done, total)))
            self.assertEqual(request.wait(10).status, 200)
            failed = engine.send("GET", "/status", params={"code": "500"})
            with self.assertRaises(courier.HTTPStatusError):
                failed.wait(10)
        self.assertIn(("upload", 300_000, 300_000), events)
        self.assertEqual([e for e in events if e[0] == "download"][-1][1], len(request.response.body))

    def test_closing_the_engine_cancels_its_requests(self):
        engine = courier.Engine(SCRIPTED)
        group = "pyclose-" + uuid.uuid4().hex[:8]
        request = engine.send("GET", "/slow", params={"ms": "3000", "group": group})
        self.assertTrue(wait_for_server(group))
        engine.close()
        with self.assertRaises(courier.CourierError) as caught:
            request.wait(5)
        self.assertEqual(caught.exception.code, 18)

    def test_activity_observer(self):
        seen = []
        running_seen = threading.Event()

        def observe(running, queued):
            seen.append(running)
            if running > 0:
                running_seen.set()
        observation = courier.observe_activity(observe)
        try:
            with courier.Engine(SCRIPTED) as engine:
                request = engine.send("GET", "/slow", params={"ms": "200"})
                # Told while the request runs: wait for that notification, not for a while.
                self.assertTrue(running_seen.wait(10), seen)
                self.assertEqual(request.wait(10).status, 200)
        finally:
            observation.cancel()


class TLS(unittest.TestCase):
    """verify=, cafile= and pins= against the suite's nginx TLS servers and test CA."""
    HTTPS = os.environ.get("COURIER_TEST_HTTPS")
    SELFSIGNED = os.environ.get("COURIER_TEST_SELFSIGNED")
    CERTS = os.environ.get("COURIER_TEST_CERTS")

    def setUp(self):
        if not self.HTTPS:
            self.skipTest("COURIER_TEST_HTTPS not set")

    def test_cafile_trusts_the_test_ca(self):
        with courier.Engine(self.HTTPS) as engine:
            with self.assertRaises(courier.CourierError) as untrusted:
                engine.get("/small")
            self.assertEqual(untrusted.exception.code, 22 | 2 << 8)
            self.assertEqual(engine.get("/small", cafile=self.CERTS + "/ca.pem").status, 200)

    def test_verify_false_accepts_a_self_signed_server(self):
        with courier.Engine(self.SELFSIGNED) as engine:
            with self.assertRaises(courier.CourierError):
                engine.get("/small", cafile=self.CERTS + "/ca.pem")
            self.assertEqual(engine.get("/small", verify=False).status, 200)

    def test_pins(self):
        with courier.Engine(self.HTTPS) as engine:
            ca = self.CERTS + "/ca.pem"
            self.assertEqual(engine.get("/small", cafile=ca, pins=self.CERTS + "/server.pub").status, 200)
            with self.assertRaises(courier.CourierError) as mismatch:
                engine.get("/small", cafile=ca, pins="sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            self.assertEqual(mismatch.exception.code, 22 | 6 << 8)
            with self.assertRaises(courier.CourierError) as bad:
                engine.get("/small", cafile=ca, pins="not a pin")
            self.assertEqual(bad.exception.code & 0xff, 2)


    def test_a_streamed_body_over_tls_matches_the_plain_one(self):
        # Records decrypt straight into the reader's buffer (a landing zone per record).
        with courier.Engine() as engine:
            expected = engine.get(NGINX + "/large").content
            with engine.stream("GET", self.HTTPS + "/large", cafile=self.CERTS + "/ca.pem") as response:
                self.assertEqual(response.status, 200)
                body = b"".join(response.iter_bytes())
        self.assertEqual(len(body), len(expected))
        self.assertTrue(body == expected, "the TLS body differs from the plain one")


class Asyncio(unittest.TestCase):
    def test_gather_respects_the_queue_width(self):
        group = "pyasync-" + uuid.uuid4().hex[:8]
        previous = courier.queue_width()
        courier.set_queue_width(2)

        async def main():
            with courier.Engine(SCRIPTED) as engine:
                return await asyncio.gather(*[engine.fetch("GET", "/slow", params={"ms": "50", "group": group})
                                              for _ in range(12)])
        try:
            responses = asyncio.run(main())
        finally:
            courier.set_queue_width(previous)
        self.assertEqual([r.status for r in responses], [200] * 12)
        result = stats(group)
        self.assertLessEqual(result["peak"], 2)
        self.assertEqual(result["seen"], 12)

    def test_cancelling_the_task_cancels_the_request(self):
        group = "pytask-" + uuid.uuid4().hex[:8]

        async def main():
            with courier.Engine(SCRIPTED) as engine:
                task = asyncio.ensure_future(engine.fetch("GET", "/slow", params={"ms": "5000", "group": group}))
                # Cancelled once the request is on the wire (polled off the event loop's thread).
                self.assertTrue(await asyncio.get_running_loop().run_in_executor(None, wait_for_server, group))
                task.cancel()
                started = time.monotonic()
                with self.assertRaises(asyncio.CancelledError):
                    await task
                self.assertLess(time.monotonic() - started, 2)
                follow_up = await engine.fetch("GET", "/status", params={"code": "204"})
                self.assertEqual(follow_up.status, 204)
                with self.assertRaises(courier.HTTPStatusError):
                    await engine.fetch("GET", "/status", params={"code": "503"})
        asyncio.run(main())


if __name__ == "__main__":
    unittest.main()


def resource(label, **config):
    """A resource on the scripted server whose answer the test chooses (see scripted_server.py);
    returns its path. Requests reaching it are counted under "res-<name>"."""
    name = "%s-%s" % (label, uuid.uuid4().hex[:8])
    with courier.Engine(SCRIPTED) as engine:
        engine.post("/res-config", params={"name": name}, data=json.dumps(config))
    return "/res/" + name


def requests_to(path):
    return stats("res-" + path[len("/res/"):])["seen"]


class Caching(unittest.TestCase):
    def test_engine_with_a_cache_dir_answers_from_storage(self):
        import tempfile
        path = resource("py", headers=[["Cache-Control", "max-age=600"]], body="cached in python")
        with tempfile.TemporaryDirectory() as directory:
            with courier.Engine(SCRIPTED, cache_dir=directory, cache_memory=1 << 20) as engine:
                first = engine.get(path)
                second = engine.get(path)
                self.assertEqual(first.phase, "fresh")
                self.assertFalse(first.from_cache)
                self.assertEqual(second.phase, "cached")
                self.assertTrue(second.from_cache)
                self.assertEqual(second.cache_status, "hit")
                self.assertEqual(second.body, b"cached in python")
                self.assertIsNotNone(second.header("Age"))
                engine.cache.flush()
                self.assertEqual(engine.cache.stats()["hits"], 1)
            # Another engine, another cache object, the same directory: a disk hit.
            with courier.Engine(SCRIPTED, cache_dir=directory) as engine:
                self.assertEqual(engine.get(path).phase, "cached")
                self.assertEqual(engine.cache.stats()["disk_hits"], 1)
        self.assertEqual(requests_to(path), 1)

    def test_policies_per_call(self):
        path = resource("pol", headers=[["Cache-Control", "max-age=0"], ["ETag", '"p"']], body="policy")
        cache = courier.Cache(memory=1 << 20)
        with courier.Engine(SCRIPTED, cache=cache, accepted_status=(0, 1000)) as engine:
            self.assertEqual(engine.get(path).phase, "fresh")
            self.assertEqual(engine.get(path).phase, "not_modified")
            self.assertEqual(engine.get(path, cache="cache_only").phase, "cached_stale")
            self.assertEqual(engine.get(path, cache="reload").phase, "fresh")
            generated = engine.get("/res/never-configured-%s" % uuid.uuid4().hex[:6], cache="cache_only")
            self.assertEqual((generated.status, generated.phase), (504, "generated"))
            with self.assertRaises(courier.CourierError):
                engine.get(path, cache="sometimes")
        self.assertEqual(cache.stats()["not_modified"], 1)
        cache.drop_memory()
        self.assertEqual(cache.stats()["memory_entries"], 0)

    def test_a_generated_504_is_an_http_status_error_with_its_response(self):
        with courier.Engine(SCRIPTED, cache_memory=1 << 20) as engine:
            with self.assertRaises(courier.HTTPStatusError) as caught:
                engine.get("/res/absent-%s" % uuid.uuid4().hex[:6], headers={"Cache-Control": "only-if-cached"})
        self.assertEqual(caught.exception.response.status, 504)
        self.assertEqual(caught.exception.response.phase, "generated")

    def test_cached_then_fresh_calls_back_twice(self):
        path = resource("ctf", headers=[["Cache-Control", "max-age=0"], ["ETag", '"t"']], body="then fresh")
        with courier.Engine(SCRIPTED, cache_memory=1 << 20) as engine:
            engine.get(path)
            seen = []
            request = engine.send("GET", path, callback=lambda r, e: seen.append((r.phase, r.is_preview, e)),
                                  cache="cached_then_fresh")
            final = request.wait(10)
        self.assertEqual(seen, [("cached_stale", True, None), ("not_modified", False, None)])
        self.assertEqual(final.phase, "not_modified")

    def test_cached_then_network_asks_even_when_fresh(self):
        path = resource("ctn", headers=[["Cache-Control", "max-age=600"], ["ETag", '"n"']], body="always asked")

        async def main():
            with courier.Engine(SCRIPTED, cache_memory=1 << 20) as engine:
                await engine.fetch("GET", path)
                seen = [(r.phase, r.is_preview) async for r in engine.responses("GET", path, cache="cached_then_network")]
                fresh_only = [r.phase async for r in engine.responses("GET", path, cache="cached_then_fresh")]
                return seen, fresh_only

        seen, fresh_only = asyncio.run(main())
        self.assertEqual(seen, [("cached", True), ("not_modified", False)])
        self.assertEqual(fresh_only, ["cached"], "the RFC's policy does not ask while fresh")

    def test_async_responses_yield_the_preview_then_the_final(self):
        path = resource("actf", headers=[["Cache-Control", "max-age=0"], ["ETag", '"a"']], body="async")

        async def main():
            with courier.Engine(SCRIPTED, cache_memory=1 << 20) as engine:
                await engine.fetch("GET", path)
                phases = [r.phase async for r in engine.responses("GET", path, cache="cached_then_fresh")]
                final = await engine.fetch("GET", path, cache="cached_then_fresh")
                return phases, final.phase

        phases, final = asyncio.run(main())
        self.assertEqual(phases, ["cached_stale", "not_modified"])
        self.assertEqual(final, "not_modified")

    def test_byte_ranges_are_kept_combined_and_served_from_disk(self):
        # RFC 9111 sections 3.3 and 3.4: each part is kept, parts of one representation combine,
        # and a range inside them is a 206 from storage, here through a cache directory.
        import tempfile
        path = resource("rng", headers=[["Cache-Control", "max-age=600"], ["ETag", '"r1"']],
                        body="0123456789abcdefghij", ranges=True)
        with tempfile.TemporaryDirectory() as directory:
            with courier.Engine(SCRIPTED, cache_dir=directory) as engine:
                head = engine.get(path, headers={"Range": "bytes=0-9"})
                tail = engine.get(path, headers={"Range": "bytes=10-"})
                self.assertEqual((head.status, head.phase, head.body), (206, "fresh", b"0123456789"))
                self.assertEqual((tail.status, tail.phase, tail.body), (206, "fresh", b"abcdefghij"))
                engine.cache.flush()
            with courier.Engine(SCRIPTED, cache_dir=directory) as engine:
                middle = engine.get(path, headers={"Range": "bytes=5-14"})
                self.assertEqual((middle.status, middle.phase, middle.body), (206, "cached", b"56789abcde"))
                self.assertEqual(middle.header("Content-Range"), "bytes 5-14/20")
                whole = engine.get(path)
                self.assertEqual((whole.status, whole.phase, whole.body), (200, "cached", b"0123456789abcdefghij"))
        self.assertEqual(requests_to(path), 2)

    def test_identical_gets_in_flight_share_one_request(self):
        path = resource("coal", headers=[["Cache-Control", "no-store"]], body="shared", delay_ms=300)
        with courier.Engine(SCRIPTED, cache_memory=1 << 20) as engine:
            requests = [engine.send("GET", path) for _ in range(30)]
            bodies = [r.wait(10).body for r in requests]
        self.assertEqual(bodies, [b"shared"] * 30)
        self.assertEqual(requests_to(path), 1)

    def test_data_cache_fetches_a_blob_once(self):
        import tempfile
        path = resource("blob", body="\x89PNG-ish bytes")
        with tempfile.TemporaryDirectory() as directory:
            blobs = courier.DataCache(directory, memory=1 << 20)
            first = blobs.get(SCRIPTED + path)
            second = blobs.get(SCRIPTED + path)
            blobs.close()
        self.assertEqual(first, second)
        self.assertEqual(first, "\x89PNG-ish bytes".encode())
        self.assertEqual(requests_to(path), 1)
