"""The C extension's hot path (courier/_speedups.c: asyncio requests and blocking ones) against
the Python path it stands in for: each case runs both ways in one process (the extension switched off by the engine module's
``speedups`` name) and must come out the same, errors, cancellation and leftovers included."""

import asyncio
import contextlib
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402
from courier import _engine, _fast, _response  # noqa: E402

NGINX = os.environ["COURIER_TEST_NGINX"]
SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]


@contextlib.contextmanager
def python_path():
    """The engine's Python path for the block (as without the extension)."""
    kept = _engine.speedups
    _engine.speedups = None
    try:
        yield
    finally:
        _engine.speedups = kept


def both_ways(case):
    """``case(self)`` with the extension (when built) and without it."""
    def run(self):
        if _fast.speedups is not None:
            with self.subTest(path="C"):
                case(self)
        with self.subTest(path="Python"), python_path():
            case(self)
    return run


class SpeedupsTests(unittest.TestCase):
    def test_the_extension_is_built_where_the_suite_expects_it(self):
        if os.environ.get("COURIER_TEST_EXPECT_SPEEDUPS") == "1":
            self.assertIsNotNone(_fast.speedups, "courier._speedups did not load")

    def test_it_can_be_switched_off(self):
        import subprocess
        code = "import courier._fast as f; print(f.speedups is None)"
        found = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, COURIER_PYTHON_SPEEDUPS="0",
                               PYTHONPATH=os.pathsep.join(sys.path)), capture_output=True, text=True)
        self.assertEqual(found.stdout.strip(), "True", found.stderr)

    @both_ways
    def test_responses_carry_the_same_fields(self):
        async def main():
            async with courier.AsyncClient() as client:
                return await client.get(NGINX + "/small")
        response = asyncio.run(main())
        self.assertEqual((response.status_code, len(response.content), str(response.url)), (200, 100, NGINX + "/small"))
        self.assertEqual(response.headers["content-length"], "100")
        self.assertEqual(response.request.url, NGINX + "/small")
        self.assertFalse(response.is_preview)
        self.assertIn(response._handle, _response._live_handles)

    def test_a_response_from_each_path_has_the_same_attributes(self):
        async def main():
            async with courier.AsyncClient() as client:
                return await client.get(NGINX + "/small")
        made = asyncio.run(main())
        with python_path():
            expected = asyncio.run(main())
        self.assertEqual(sorted(vars(made)), sorted(vars(expected)))

    @both_ways
    def test_many_at_once_with_failures_among_them(self):
        async def main():
            async with courier.AsyncClient(headers={"X-Client": "1"}) as client:
                calls = [client.get(SCRIPTED + "/echo", headers={"X-Index": str(i), "X-Number": i}) for i in range(12)]
                calls += [client.get(SCRIPTED + "/status", params={"code": 503}), client.get("http://127.0.0.1:1/")]
                return await asyncio.gather(*calls, return_exceptions=True)
        results = asyncio.run(main())
        for index, response in enumerate(results[:12]):
            sent = {name.lower(): value for name, value in response.json()["headers"]}
            self.assertEqual((sent["x-index"], sent["x-number"], sent["x-client"]), (str(index), str(index), "1"))
        self.assertEqual(results[12].status_code, 503)
        self.assertIsInstance(results[13], courier.ConnectError)

    @both_ways
    def test_a_header_set_to_none_is_not_sent(self):
        async def main():
            with courier.Engine() as engine:
                return (await engine.fetch("GET", SCRIPTED + "/echo", headers={"User-Agent": None, "X-Kept": "1"})).json()
        names = [name.lower() for name, _ in asyncio.run(main())["headers"]]
        self.assertNotIn("user-agent", names)
        self.assertIn("x-kept", names)

    @both_ways
    def test_refused_requests_raise_what_httpx_raises(self):
        async def main():
            async with courier.AsyncClient() as client:
                with self.assertRaises(courier.UnsupportedProtocol):
                    await client.get("ftp://127.0.0.1/")
                with self.assertRaises(courier.InvalidURL):
                    await client.get("http://exa mple/")
                with self.assertRaises(courier.LocalProtocolError):
                    await client.get(SCRIPTED + "/echo", headers={"X-Bad": "a\r\nInjected: 1"})
                return (await client.get(NGINX + "/small")).status_code
        self.assertEqual(asyncio.run(main()), 200)

    def test_a_nul_in_the_url_or_a_field_is_refused_not_cut(self):
        if _fast.speedups is None:
            self.skipTest("no C extension")

        async def main():
            with courier.Engine() as engine:
                for url, headers in ((NGINX + "/small\0/other", None), (NGINX + "/small", {"X-A": "1\0two"})):
                    with self.assertRaises(ValueError):
                        await engine.fetch("GET", url, headers=headers)
                return engine._futures
        self.assertEqual(asyncio.run(main()), {})

    @both_ways
    def test_a_closed_cookie_jar_is_no_jar(self):
        async def main():
            jar = courier.CookieJar()
            jar.close()
            with courier.Engine(cookies=jar) as engine:
                return (await engine.fetch("GET", NGINX + "/small")).status
        self.assertEqual(asyncio.run(main()), 200)

    @both_ways
    def test_a_cancelled_request_is_freed_and_the_engine_serves_on(self):
        async def main():
            async with courier.AsyncClient() as client:
                waiting = asyncio.ensure_future(client.get(SCRIPTED + "/silence"))
                await asyncio.sleep(0)
                while not any(engine._futures for engine in client._engines.values()):
                    await asyncio.sleep(0)
                waiting.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await waiting
                engine = next(iter(client._engines.values()))
                # The cancelled request's completion still arrives and is collected.
                while engine._futures:
                    await asyncio.sleep(0.001)
                return (await client.get(NGINX + "/small")).status_code, engine
        status, engine = asyncio.run(main())
        self.assertEqual(status, 200)
        self.assertEqual(engine._futures, {})

    @both_ways
    def test_requests_with_python_state_finish_beside_plain_ones(self):
        seen = []

        async def main():
            with courier.Engine() as engine:
                calls = [engine.fetch("GET", NGINX + "/small") for _ in range(4)]
                calls.append(engine.fetch("GET", NGINX + "/small", progress=lambda *progress: seen.append(progress)))
                calls.append(engine.fetch("GET", SCRIPTED + "/echo", retry=courier.Retry(count=2, on_retry=lambda *attempt: None)))
                return [response.status for response in await asyncio.gather(*calls)]
        self.assertEqual(asyncio.run(main()), [200] * 6)
        self.assertTrue(seen)

    @both_ways
    def test_blocking_requests_answer_and_fail_as_before(self):
        with courier.Engine() as engine:
            echo = engine.get(SCRIPTED + "/echo", headers={"X-Blocking": 1}).json()
            self.assertIn(["X-Blocking", "1"], echo["headers"])
            with self.assertRaises(courier.HTTPStatusError) as caught:
                engine.get(SCRIPTED + "/status?code=404&body=gone")
            self.assertEqual((caught.exception.response.status, caught.exception.response.body), (404, b"gone"))
            with self.assertRaises(courier.ConnectError):
                engine.get("http://127.0.0.1:1/")
            with self.assertRaises(courier.UnsupportedProtocol):
                engine.get("ftp://127.0.0.1/")
        with courier.Client() as client:
            self.assertEqual([client.get(NGINX + "/small").status_code for _ in range(5)], [200] * 5)
            self.assertEqual(client.get(SCRIPTED + "/status?code=503").status_code, 503)

    def test_no_response_handle_outlives_its_response(self):
        async def main():
            async with courier.AsyncClient() as client:
                await asyncio.gather(*(client.get(NGINX + "/small") for _ in range(20)))
        before = len(_response._live_handles)
        asyncio.run(main())
        with courier.Client() as client:
            for _ in range(5):
                client.get(NGINX + "/small")
            try:
                client.get("http://127.0.0.1:1/")
            except courier.ConnectError:
                pass
        import gc
        gc.collect()
        self.assertEqual(len(_response._live_handles), before)


if __name__ == "__main__":
    unittest.main()
